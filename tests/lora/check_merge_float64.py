#!/usr/bin/env python3
"""ckhost export-lora's merges against a float64 reference computed here, independently of
ckhost's code: for each llama-export-lora command of ../shared/testdata/lora/README.md, ckhost's
merged model is read back and every merged value compared with W + sum_i scale_i B_i A_i
computed in float64 (NumPy when the interpreter has it, else Python's own floats, which are
float64 too) from the same GGUF inputs. Each value must be the float64 result rounded to F16 or
the F16 value next to it; the count of those one ulp away is printed. Every tensor no adapter
changes must be the base's bytes.

    tests/lora/check_merge_float64.py CKHOST SHARED_TESTDATA

Exit 0 when all agree, 1 when one does not, 77 (skipped) without ../shared/testdata/lora."""
import math
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy
except ImportError:
    numpy = None

TYPE_SIZES = {0: 4, 1: 2}  # F32, F16: the merge inputs here (adapters F32/F16, bases F16)


def read_gguf(path):
    """(metadata {key: value} in order, {name: (type, ne, bytes)}) of a little-endian GGUF v3."""
    data = open(path, 'rb').read()
    pos = 4 + 4
    n_tensors, n_kv = struct.unpack_from('<QQ', data, pos)
    pos += 16

    def string(p):
        n = struct.unpack_from('<Q', data, p)[0]
        return data[p + 8:p + 8 + n].decode(), p + 8 + n

    scalar = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f', 7: '<?', 10: '<Q',
              11: '<q', 12: '<d'}

    def value(t, p):
        if t == 8:
            return string(p)
        if t == 9:
            et, n = struct.unpack_from('<IQ', data, p)
            p += 12
            items = []
            for _ in range(n):
                v, p = value(et, p)
                items.append(v)
            return items, p
        return struct.unpack_from(scalar[t], data, p)[0], p + struct.calcsize(scalar[t])

    metadata = {}
    for _ in range(n_kv):
        key, pos = string(pos)
        t = struct.unpack_from('<I', data, pos)[0]
        metadata[key], pos = value(t, pos + 4)
    infos = []
    for _ in range(n_tensors):
        name, pos = string(pos)
        dims = struct.unpack_from('<I', data, pos)[0]
        ne = list(struct.unpack_from('<%dq' % dims, data, pos + 4))
        t, offset = struct.unpack_from('<IQ', data, pos + 4 + 8 * dims)
        pos += 4 + 8 * dims + 12
        infos.append((name, t, ne, offset))
    alignment = metadata.get('general.alignment', 32)
    start = (pos + alignment - 1) // alignment * alignment
    tensors = {}
    for name, t, ne, offset in infos:
        n = math.prod(ne)
        size = n * TYPE_SIZES[t] if t in TYPE_SIZES else None
        tensors[name] = (t, ne, data[start + offset:start + offset + size] if size else None)
    return metadata, tensors


def floats(tensor):
    t, ne, raw = tensor
    fmt = '<%d%s' % (len(raw) // TYPE_SIZES[t], 'f' if t == 0 else 'e')
    return list(struct.unpack(fmt, raw))


def f16_round(x):
    """x rounded to the nearest F16 (ties to even), as a float; inf beyond F16's range."""
    try:
        return struct.unpack('<e', struct.pack('<e', x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def f16_ulp(x):
    x = abs(x)
    if x < 2.0 ** -14:
        return 2.0 ** -24
    return 2.0 ** (math.floor(math.log2(x)) - 10)


def merged_float64(base, adapters, name):
    """W + sum scale_i B_i A_i for tensor `name`, as rows of floats."""
    columns, rows = base[name][1][0], base[name][1][1]
    w = floats(base[name])
    embedding = name.startswith('token_embd')
    if numpy is not None:
        result = numpy.array(w, dtype=numpy.float64).reshape(rows, columns)
    else:
        result = [w[i * columns:(i + 1) * columns] for i in range(rows)]
    for metadata, tensors, user_scale in adapters:
        a, b = tensors[name + '.lora_a'], tensors[name + '.lora_b']
        rank = b[1][0]
        alpha = metadata.get('adapter.lora.alpha', 0.0)
        scale = user_scale * alpha / rank if alpha else user_scale
        av, bv = floats(a), floats(b)
        # B [rows, r] A [r, columns]; token_embd: lora_a [rows, r] (stored transposed), lora_b
        # [columns, r].
        if numpy is not None:
            A = numpy.array(av, dtype=numpy.float64)
            B = numpy.array(bv, dtype=numpy.float64)
            product = (A.reshape(rows, rank) @ B.reshape(columns, rank).T if embedding
                       else B.reshape(rows, rank) @ A.reshape(rank, columns))
            result = result + scale * product
            continue
        for i in range(rows):
            row = result[i] = list(result[i])
            p = av[i * rank:(i + 1) * rank] if embedding else bv[i * rank:(i + 1) * rank]
            for c in range(columns):
                q = bv[c * rank:(c + 1) * rank] if embedding else av[c::columns]
                row[c] += scale * math.fsum(x * y for x, y in zip(p, q))
    return [list(r) for r in result]


def check(ckhost, lora, base_path, adapter_args, out):
    subprocess.run([ckhost, '-q', 'export-lora', '-m', base_path] + adapter_args + ['-o', out, '-t', '2'],
                   check=True, cwd=lora)
    _, base = read_gguf(os.path.join(lora, base_path))
    adapters = []
    for flag, value in zip(adapter_args[::2], adapter_args[1::2]):
        for item in value.split(','):
            path, _, scale = item.partition(':') if flag == '--lora-scaled' else (item, '', '1')
            metadata, tensors = read_gguf(os.path.join(lora, path))
            adapters.append((metadata, tensors, float(scale)))
    _, merged = read_gguf(out)
    changed = {name[:-7] for name in adapters[0][1] if name.endswith('.lora_a')}
    values = one_ulp = 0
    for name, tensor in merged.items():
        if name not in changed:
            if tensor[2] != base[name][2]:
                print('%s: %s is not the base\'s bytes' % (out, name))
                return False
            continue
        want = merged_float64(base, adapters, name)
        got = floats(tensor)
        columns = tensor[1][0]
        for i, g in enumerate(got):
            exact = want[i // columns][i % columns]
            rounded = f16_round(exact)
            if g != rounded:
                if abs(g - rounded) > f16_ulp(rounded):
                    print('%s: %s[%d] = %r, float64 %r' % (out, name, i, g, exact))
                    return False
                one_ulp += 1
            values += 1
    print('%s: %d merged values, %d one F16 ulp from float64 (%s)' %
          (os.path.basename(out), values, one_ulp, 'numpy' if numpy else 'python floats'))
    return True


def main():
    ckhost, shared = sys.argv[1], sys.argv[2]
    lora = os.path.join(shared, 'lora')
    if not os.path.isdir(lora):
        print('../shared/testdata/lora is absent: skipped')
        return 77
    merges = [
        ('../hf/llama-bf16.f16.gguf', ['--lora', 'llama-bf16-lora-all-r4.f32.gguf']),
        ('mistral-nemo-bf16.f16.gguf', ['--lora', 'mistral-nemo-bf16-lora-r8.f32.gguf']),
        ('mistral-nemo-bf16.f16.gguf', ['--lora-scaled', 'mistral-nemo-bf16-lora-r8.f32.gguf:0.5']),
        ('mistral-nemo-bf16.f16.gguf',
         ['--lora', 'mistral-nemo-bf16-lora-r8.f32.gguf,mistral-nemo-bf16-lora-r16.f16.gguf']),
    ]
    with tempfile.TemporaryDirectory() as out:
        ok = all(check(ckhost, lora, base, args, os.path.join(out, 'merged-%d.gguf' % i))
                 for i, (base, args) in enumerate(merges))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
