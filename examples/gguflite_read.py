#!/usr/bin/env python3
"""Read a GGUF-lite file (ckhost's `gguflite` format) with the Python standard library only.

GGUF-lite is meant to be read from any language with a flat binary parser; this is the
whole reader: header, metadata lines, descriptors, and the four dtypes dequantized to f32.

usage:
    gguflite_read.py FILE              # JSON summary on stdout: metadata, tensors
    gguflite_read.py FILE --dump DIR   # also DIR/<index>.f32: each tensor's values as
                                       # little-endian f32 (Q8/Q4 dequantized)
"""
import argparse
import array
import hashlib
import json
import math
import os
import struct
import sys

MAGIC = 0x474C4654  # 'GLFT' as a little-endian u32; on disk 54 46 4C 47
DTYPES = {0: "F32", 1: "F16", 2: "Q8_per_channel", 3: "Q4_per_group_64"}
SCALAR_TYPES = {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool",
                "str"}
FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
# Each byte of a Q4 tensor holds two 4-bit two's complement values, the even element low.
NIBBLES = [((b & 15) - 16 * ((b & 15) >= 8), (b >> 4) - 16 * ((b >> 4) >= 8))
           for b in range(256)]


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
                parsed = [typed_value(element, v) for v in parsed]
            metadata[key] = (prefix, parsed)
        else:
            metadata[key] = ("str", value)
    return metadata


def f32_array(values):
    out = array.array("f", values)
    if sys.byteorder == "big":
        out.byteswap()  # the file is little-endian; keep values native
    return out


def dequantize(data, dtype, dims):
    """Stored bytes of one tensor -> array('f') of its values, row-major."""
    count = math.prod(dims)
    if dtype == 0:
        return f32_array(struct.unpack_from(f"<{count}f", data))
    if dtype == 1:
        return f32_array(struct.unpack_from(f"<{count}e", data))
    rows, cols = dims
    if dtype == 2:  # rows f16 scales, then rows*cols int8
        scales = struct.unpack_from(f"<{rows}e", data)
        q = struct.unpack_from(f"<{rows * cols}b", data, 2 * rows)
        return f32_array(q[r * cols + j] * scales[r] for r in range(rows) for j in range(cols))
    groups = rows * (cols // 64)  # rows*(cols/64) f16 scales, then rows*cols/2 packed bytes
    scales = struct.unpack_from(f"<{groups}e", data)
    packed = data[2 * groups:]
    values = []
    for g in range(groups):
        s = scales[g]
        for b in packed[32 * g:32 * g + 32]:
            lo, hi = NIBBLES[b]
            values.append(lo * s)
            values.append(hi * s)
    return f32_array(values)


def read(path):
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
        tensors.append({"name": name, "dims": dims, "dtype": dtype, "offset": offset})
    data_start = pos
    sizes = {0: lambda n, d: 4 * n, 1: lambda n, d: 2 * n,
             2: lambda n, d: 2 * d[0] + n, 3: lambda n, d: 2 * (n // 64) + n // 2}
    for t in tensors:
        start = data_start + t["offset"]
        size = sizes[t["dtype"]](math.prod(t["dims"]), t["dims"])
        if start + size > len(data):
            raise FormatError(f"tensor '{t['name']}': data runs past the end of the file")
        t["values"] = dequantize(memoryview(data)[start:start + size], t["dtype"], t["dims"])
    return metadata, tensors


def summary_value(kind, value):
    def plain(v):  # JSON has no NaN or infinity
        return str(v) if isinstance(v, float) and not math.isfinite(v) else v
    if kind.startswith("arr["):
        return {"count": len(value), "head": [plain(v) for v in value[:8]]}
    return plain(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("--dump", metavar="DIR", help="write DIR/<index>.f32 per tensor")
    args = parser.parse_args()
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
    for index, t in enumerate(tensors):
        values = t["values"]
        little = array.array("f", values)
        if sys.byteorder == "big":
            little.byteswap()
        raw = little.tobytes()
        if args.dump:
            with open(os.path.join(args.dump, f"{index}.f32"), "wb") as f:
                f.write(raw)
        report["tensors"].append({"name": t["name"], "dims": t["dims"],
                                  "dtype": DTYPES[t["dtype"]], "offset": t["offset"],
                                  "sha256_f32": hashlib.sha256(raw).hexdigest(),
                                  "first": [summary_value("f32", v) for v in values[:4]]})
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
