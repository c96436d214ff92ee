#!/usr/bin/env python3
"""Writes a GGUF file with its layers in reverse order: every blk.N.* tensor keeps its place
within its layer, the layers come last to first where the first layer's tensors were, the other
tensors keep their places. Metadata and tensor data are copied byte for byte, laid out as ggml
lays them (each tensor padded to the alignment), so the file is what
tests/cli/test_quantize_keep_split.cpp writes in process (it checks the SHA-256 in SHA256SUMS).

    python3 reverse_layers.py INPUT.gguf OUTPUT.gguf

Standard library only. The input must be a little-endian GGUF v3 file as ggml writes it."""
import re
import struct
import sys

SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY = 8, 9


class Cursor:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from('<' + fmt, self.data, self.at)
        self.at += struct.calcsize('<' + fmt)
        return values[0] if len(values) == 1 else values

    def string(self):
        n = self.take('Q')
        self.at += n
        return self.data[self.at - n:self.at].decode()

    def value(self, kind):
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            element, count = self.take('I'), self.take('Q')
            return [self.value(element) for _ in range(count)]
        self.at += SCALAR[kind]
        return self.data[self.at - SCALAR[kind]:self.at]


def layer_of(name):
    match = re.match(r'blk\.(\d+)\.', name)
    return int(match.group(1)) if match else None


def reversed_layers(names):
    """The new order, as indices into names."""
    layered = [i for i, n in enumerate(names) if layer_of(n) is not None]
    if not layered:
        return list(range(len(names)))
    by_layer = sorted(layered, key=lambda i: -layer_of(names[i]))  # stable: in-layer order kept
    first = layered[0]
    rest = [i for i in range(len(names)) if layer_of(names[i]) is None]
    before = [i for i in rest if i < first]
    return before + by_layer + [i for i in rest if i > first]


def main(source, target):
    data = open(source, 'rb').read()
    c = Cursor(data)
    magic, version, n_tensors, n_kv = c.take('4sIQQ')
    assert magic == b'GGUF' and version == 3, 'a GGUF v3 file'
    alignment = 32
    for _ in range(n_kv):
        key, kind = c.string(), c.take('I')
        value = c.value(kind)
        if key == 'general.alignment':
            alignment = struct.unpack('<I', value)[0]
    kv_end = c.at
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        n_dims = c.take('I')
        dims = [c.take('Q') for _ in range(n_dims)]
        kind, offset = c.take('I'), c.take('Q')
        infos.append((name, dims, kind, offset))
    data_start = -(-c.at // alignment) * alignment
    ends = sorted(i[3] for i in infos)[1:] + [len(data) - data_start]
    chunk = {i[3]: data[data_start + i[3]:data_start + e] for i, e in
             zip(sorted(infos, key=lambda i: i[3]), ends)}
    order = reversed_layers([i[0] for i in infos])
    head, body, offset = bytearray(data[:kv_end]), bytearray(), 0
    for i in order:
        name, dims, kind, old = infos[i]
        encoded = name.encode()
        head += struct.pack('<Q', len(encoded)) + encoded + struct.pack('<I', len(dims))
        head += b''.join(struct.pack('<Q', d) for d in dims) + struct.pack('<IQ', kind, offset)
        body += chunk[old]
        offset += len(chunk[old])
    head += bytes(-len(head) % alignment)
    open(target, 'wb').write(head + body)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
