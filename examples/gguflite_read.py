#!/usr/bin/env python3
"""Read a GGUF-lite file (ckhost's `gguflite` format): the Python standard library suffices.

GGUF-lite is meant to be read from any language with a flat binary parser; this is the
whole reader: header, metadata lines, descriptors, and the four dtypes dequantized to f32.
The format is described in docs/formats/gguf-lite.md. The summary decodes only the first
values of each tensor. To dequantize everything (--values, --dump), numpy is used when it
is installed; without it, or with --no-numpy, bytes.translate over runs of equal scales
(no Python object per value). Both give the same bytes, those ckhost gives.

usage:
    gguflite_read.py FILE              # JSON summary on stdout: metadata, tensors (each one's
                                       # stored bytes' SHA-256 and first values)
    gguflite_read.py FILE --values     # also dequantize everything: SHA-256 of the f32 values
    gguflite_read.py FILE --dump DIR   # also one file per tensor, and DIR/manifest.json
    gguflite_read.py FILE --dump DIR --no-numpy   # the standard library only

--dump writes DIR/<tensor name>.f32: the tensor's values as little-endian f32, row-major
with the file's dims (outermost first), Q8/Q4 dequantized. Bytes of a name other than
A-Z a-z 0-9 . _ - (and a leading '.') are written %XX, so every name makes one plain file
name; DIR/manifest.json lists each tensor's name, file, dims, stored dtype and SHA-256.
"""
import argparse
import collections
import hashlib
import json
import math
import operator
import os
import struct
import sys

MAGIC = 0x474C4654  # 'GLFT' as a little-endian u32; on disk 54 46 4C 47
DTYPES = {0: "F32", 1: "F16", 2: "Q8_per_channel", 3: "Q4_per_group_64"}
SCALAR_TYPES = {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool",
                "str"}
FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
Q8_VALUES = [b - 256 if b >= 128 else b for b in range(256)]   # byte -> int8
Q4_VALUES = [n - 16 if n >= 8 else n for n in range(16)]       # nibble -> 4-bit two's complement
HIGH_NIBBLE = bytes(b >> 4 for b in range(256))
SAFE_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


class FormatError(Exception):
    pass


def typed_value(kind, value):
    """JSON value of a typed line -> Python value (floats may be "nan"/"inf"/"-inf")."""
    if kind in ("f32", "f64"):
        return FLOAT_WORDS[value] if isinstance(value, str) else float(value)
    return value


def parse_metadata(text):
    """`key=<type>:<json>` lines (or untyped `key=value`, a string) -> {key: (type, value)}."""
    metadata = {}
    for number, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        key, eq, value = line.partition("=")
        if not eq or not key:
            raise FormatError(f"metadata line {number}: expected key=value")
        prefix, colon, rest = value.partition(":")
        if colon and (prefix in SCALAR_TYPES or prefix == "arr" or prefix.startswith("arr[")):
            # Floats are written in their shortest form, so "-0" or "1" must stay floats.
            floats = prefix in ("f32", "f64", "arr[f32]", "arr[f64]")
            parsed = json.loads(rest, parse_int=float if floats else int)
            if prefix in SCALAR_TYPES:
                parsed = typed_value(prefix, parsed)
            else:
                element = prefix[4:-1]
                if not prefix.endswith("]") or element not in SCALAR_TYPES:
                    raise FormatError(f"metadata line {number}: bad array type '{prefix}'")
                if element in ("f32", "f64"):  # only "nan", "inf", "-inf" need a change
                    parsed = [FLOAT_WORDS[v] if isinstance(v, str) else v for v in parsed]
            metadata[key] = (prefix, parsed)
        else:
            metadata[key] = ("str", value)
    return metadata


# Dequantizing without numpy. A value is q * f32(s), and every value that shares a scale s
# shares one table from the stored byte to the f32 bytes of its value(s). So the units of one
# scale (a Q8 row, a Q4 group of 64) are gathered together, and each run of equal scales is
# decoded by bytes.translate, one call per output byte: C speed, no Python object per value.
# Python loops only over the units (to sort them) and over the distinct scales (a few thousand
# in a tensor: f16 has 65536 values). The products are exact in f32 (at most 8 x 11 bits), so
# computing them in Python's double and packing to f32 gives ckhost's bits.

def q8_tables(scale):
    """Stored byte -> the 4 bytes of its value, as 4 translate tables."""
    values = struct.pack("<256f", *[q * scale for q in Q8_VALUES])
    return [values[k::4] for k in range(4)]


def q4_tables(scale):
    """Stored byte (two values, the even one low) -> 8 bytes, as 8 translate tables."""
    values = struct.pack("<16f", *[q * scale for q in Q4_VALUES])
    tables = []
    for k in range(4):
        column = values[k::4]  # byte k of each nibble's value
        tables.append(column * 16)  # indexed by the low nibble
    for k in range(4):
        column = values[k::4]
        tables.append(HIGH_NIBBLE.translate(column + bytes(240)))  # by the high nibble
    return tables


def decode_by_scale(codes, scale_bits, unit, make_tables, out_per_byte):
    """Values of `codes` (units of `unit` bytes, unit i scaled by f16 scale_bits[i]) as
    little-endian f32 bytes, each stored byte giving `out_per_byte` bytes."""
    units = len(scale_bits)
    chunks = [codes[i:i + unit] for i in range(0, units * unit, unit)]
    order = sorted(range(units), key=scale_bits.__getitem__)
    gathered = b"".join(operator.itemgetter(*order)(chunks)) if units > 1 else chunks[0]
    out = bytearray(len(gathered) * out_per_byte)
    pos = 0
    for bits, count in sorted(collections.Counter(scale_bits).items()):  # one run per scale
        end = pos + count * unit
        run = gathered[pos:end]
        (scale,) = struct.unpack("<e", struct.pack("<H", bits))
        for k, table in enumerate(make_tables(scale)):
            if table.count(0) != 256:  # a column of zeros is already there
                out[pos * out_per_byte + k:end * out_per_byte:out_per_byte] = run.translate(table)
        pos = end
    # Back to the file's order: unit order[i] went to place i.
    size = unit * out_per_byte
    pieces = [out[i:i + size] for i in range(0, len(out), size)]
    place = [0] * units
    for i, u in enumerate(order):
        place[u] = i
    return b"".join(operator.itemgetter(*place)(pieces)) if units > 1 else bytes(pieces[0])


def dequantize_numpy(np, data, dtype, dims):
    """dequantize() with numpy: the same formulas, in f32, on whole arrays. Returns an array
    (or the file's bytes for F32): anything with the buffer protocol, little-endian f32."""
    f32 = np.dtype("<f4")
    if dtype == 0:
        return data
    if dtype == 1:
        return np.frombuffer(data, "<f2").astype(f32)
    rows, cols = dims
    if dtype == 2:
        scales = np.frombuffer(data, "<f2", rows).astype(f32)
        q = np.frombuffer(data, np.int8, rows * cols, 2 * rows).reshape(rows, cols)
        values = q.astype(f32)
        values *= scales[:, None]
        return values
    groups = rows * (cols // 64)
    scales = np.frombuffer(data, "<f2", groups).astype(f32)
    packed = np.frombuffer(data, np.uint8, groups * 32, 2 * groups).reshape(groups, 32)
    # Each byte -> its two values (the even element in the low nibble), by one table lookup.
    pairs = np.array([[Q4_VALUES[b & 15], Q4_VALUES[b >> 4]] for b in range(256)], f32)
    values = np.take(pairs, packed, axis=0).reshape(groups, 64)  # take: 3x faster than [ ]
    values *= scales[:, None]
    return values


def dequantize(data, dtype, dims, np=None):
    """Stored bytes of one tensor -> its values as little-endian f32 bytes, row-major."""
    if np is not None:
        return dequantize_numpy(np, data, dtype, dims)
    count = math.prod(dims)
    if dtype == 0:
        return bytes(data)
    if dtype == 1:
        return struct.pack(f"<{count}f", *struct.unpack(f"<{count}e", data))
    rows, cols = dims
    if dtype == 2:  # rows f16 scales, then rows*cols int8
        scales = struct.unpack_from(f"<{rows}H", data)
        return decode_by_scale(bytes(data[2 * rows:]), scales, cols, q8_tables, 4)
    groups = rows * (cols // 64)  # rows*(cols/64) f16 scales, then rows*cols/2 packed bytes
    scales = struct.unpack_from(f"<{groups}H", data)
    return decode_by_scale(bytes(data[2 * groups:]), scales, 32, q4_tables, 8)


def stored_size(dtype, dims):
    count = math.prod(dims)
    if dtype == 0:
        return 4 * count
    if dtype == 1:
        return 2 * count
    if dtype == 2:
        return 2 * dims[0] + count
    return 2 * (count // 64) + count // 2


def read(path):
    """-> (metadata, tensors); each tensor a dict with name, dims, dtype, offset and `stored`,
    its bytes in the file (checked to lie inside it). Nothing is dequantized yet."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 16:
        raise FormatError("file too short for the 16-byte header")
    magic, version, n_tensors, metadata_len = struct.unpack_from("<4I", data)
    if magic != MAGIC:
        raise FormatError(f"bad magic 0x{magic:08x}: not a GGUF-lite file")
    if version != 1:
        raise FormatError(f"unsupported version {version}")
    pos = 16
    metadata = parse_metadata(data[pos:pos + metadata_len].decode("utf-8"))
    pos += metadata_len
    tensors = []
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", data, pos)
        name = data[pos + 2:pos + 2 + name_len].decode("utf-8")
        pos += 2 + name_len
        n_dims = data[pos]
        dims = list(struct.unpack_from(f"<{n_dims}I", data, pos + 1))
        pos += 1 + 4 * n_dims
        dtype, offset = struct.unpack_from("<BQ", data, pos)
        pos += 9
        if dtype not in DTYPES:
            raise FormatError(f"tensor '{name}': dtype {dtype} is unknown")
        if dtype >= 2 and (len(dims) != 2 or (dtype == 3 and dims[1] % 64 != 0)):
            rule = " with an inner dim that is a multiple of 64" if dtype == 3 else ""
            raise FormatError(f"tensor '{name}': {DTYPES[dtype]} needs 2 dims{rule}")
        tensors.append({"name": name, "dims": dims, "dtype": dtype, "offset": offset})
    data_start = pos
    view = memoryview(data)
    for t in tensors:
        start = data_start + t["offset"]
        size = stored_size(t["dtype"], t["dims"])
        if start + size > len(data):
            raise FormatError(f"tensor '{t['name']}': data runs past the end of the file")
        t["stored"] = view[start:start + size]
    return metadata, tensors


def first_values(t, count=4):
    """The first `count` values of a tensor, decoded from its first row or group only."""
    data, dtype, dims = t["stored"], t["dtype"], t["dims"]
    count = min(count, math.prod(dims))
    if dtype == 0:
        return struct.unpack_from(f"<{count}f", data)
    if dtype == 1:
        return struct.unpack_from(f"<{count}e", data)
    (scale,) = struct.unpack_from("<e", data)
    if dtype == 2:
        return tuple(q * scale for q in struct.unpack_from(f"<{count}b", data, 2 * dims[0]))
    codes = data[2 * (dims[0] * dims[1] // 64):]
    values = [Q4_VALUES[codes[i // 2] >> (4 * (i % 2)) & 15] * scale for i in range(count)]
    # Through f32, as the full decode gives them.
    return struct.unpack(f"<{count}f", struct.pack(f"<{count}f", *values))


def file_name(tensor_name):
    """A tensor name as a plain file name: unsafe bytes (and a leading '.') as %XX."""
    raw = tensor_name.encode("utf-8")
    return "".join(chr(b) if b in SAFE_NAME_BYTES and not (i == 0 and b == ord("."))
                   else f"%{b:02X}" for i, b in enumerate(raw)) + ".f32"


def summary_value(kind, value):
    def plain(v):  # JSON has no NaN or infinity
        return str(v) if isinstance(v, float) and not math.isfinite(v) else v
    if kind.startswith("arr["):
        return {"count": len(value), "head": [plain(v) for v in value[:8]]}
    return plain(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("--dump", metavar="DIR",
                        help="write DIR/<tensor name>.f32 per tensor and DIR/manifest.json")
    parser.add_argument("--values", action="store_true",
                        help="dequantize every tensor and add the SHA-256 of its f32 values "
                             "(--dump implies it)")
    parser.add_argument("--no-numpy", action="store_true",
                        help="decode with the standard library even when numpy is installed")
    args = parser.parse_args()
    decode = args.values or args.dump is not None
    np = None
    if decode and not args.no_numpy:
        try:
            import numpy as np
        except ImportError:
            pass
    try:
        metadata, tensors = read(args.file)
    except (FormatError, UnicodeDecodeError, ValueError, struct.error) as e:
        print(f"gguflite_read.py: {args.file}: {e}", file=sys.stderr)
        return 1
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
    report = {"metadata": {k: {"type": t, "value": summary_value(t, v)}
                           for k, (t, v) in metadata.items()},
              "tensors": []}
    manifest = []
    for t in tensors:
        stored = t["stored"]
        entry = {"name": t["name"], "dims": t["dims"], "dtype": DTYPES[t["dtype"]],
                 "offset": t["offset"], "bytes": len(stored),
                 "sha256": hashlib.sha256(stored).hexdigest(),
                 "first": [summary_value("f32", v) for v in first_values(t)]}
        report["tensors"].append(entry)
        if not decode:
            continue
        raw = memoryview(dequantize(stored, t["dtype"], t["dims"], np)).cast("B")
        entry["sha256_f32"] = hashlib.sha256(raw).hexdigest()
        if args.dump:
            name = file_name(t["name"])
            with open(os.path.join(args.dump, name), "wb") as f:
                f.write(raw)
            manifest.append({"name": t["name"], "file": name, "dims": t["dims"],
                             "stored_dtype": DTYPES[t["dtype"]], "values": math.prod(t["dims"]),
                             "sha256_f32": entry["sha256_f32"]})
    if args.dump:
        with open(os.path.join(args.dump, "manifest.json"), "w") as f:
            json.dump({"source": os.path.abspath(args.file), "dtype": "f32", "byte_order": "little",
                       "tensors": manifest}, f, indent=1)
            f.write("\n")
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
