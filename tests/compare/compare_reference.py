#!/usr/bin/python3
"""The figures of `ckhost compare` computed independently with NumPy in float64, for
tests/compare/test_compare.cpp: from two all-F32 GGUF files (what `ckhost --pipeline
'gguf:dequant[to=f32]:gguf'` writes of each side) and, optionally, a GGUF importance matrix as
llama-imatrix writes it.

    compare_reference.py A.f32.gguf B.f32.gguf [IMATRIX.gguf]

Prints one JSON document: {"tensors": {NAME: FIGURES}, "model": FIGURES} for the tensors both
files hold with the same shape and no NaN or infinite value; FIGURES are rmse, max_abs_error,
relative_error, cosine, snr_db (null where not a number), identical, and with a matrix
weighted_error and weighted_snr_db for the tensors with an entry of their size.
"""
import json
import math
import struct
import sys

import numpy as np

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
           11: "<q", 12: "<d"}


class Reader:
    """A little-endian GGUF (v2, v3) whose tensors are all F32: name -> (ne, float64 values)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.pos = 0
        magic, version = self.take("<4sI")
        assert magic == b"GGUF" and version in (2, 3), path
        n_tensors, n_kv = self.take("<QQ")
        alignment = 32
        for _ in range(n_kv):
            key = self.string()
            value = self.value(self.take("<I")[0])
            if key == "general.alignment":
                alignment = value
        infos = []
        for _ in range(n_tensors):
            name = self.string()
            n_dims = self.take("<I")[0]
            ne = list(self.take("<%dQ" % n_dims))
            ggml_type, offset = self.take("<IQ")
            assert ggml_type == 0, f"{path}: {name} is not F32 (type {ggml_type})"
            infos.append((name, ne, offset))
        start = (self.pos + alignment - 1) // alignment * alignment
        self.tensors = {}
        for name, ne, offset in infos:
            n = math.prod(ne)
            values = np.frombuffer(self.data, dtype="<f4", count=n, offset=start + offset)
            self.tensors[name] = (ne, values.astype(np.float64))

    def take(self, fmt):
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def string(self):
        n = self.take("<Q")[0]
        self.pos += n
        return self.data[self.pos - n:self.pos].decode("utf-8", "replace")

    def value(self, kind):
        if kind == 8:
            return self.string()
        if kind == 9:
            item, count = self.take("<IQ")
            return [self.value(item) for _ in range(count)]
        return self.take(SCALARS[kind])[0]


def trimmed(ne):
    ne = list(ne)
    while len(ne) > 1 and ne[-1] == 1:
        ne.pop()
    return ne


def importance(path):
    """name -> weights, as llama-quantize normalizes them: in_sum2 / round(counts) per expert."""
    matrix = Reader(path).tensors
    out = {}
    for name, (_, sums) in matrix.items():
        if not name.endswith(".in_sum2"):
            continue
        base = name[: -len(".in_sum2")]
        counts = matrix[base + ".counts"][1]
        columns = len(sums) // len(counts)
        weights = np.empty(len(sums))
        for j, c in enumerate(counts):
            c = float(math.floor(abs(c) + 0.5) * (1 if c >= 0 else -1))  # C's lround
            part = sums[j * columns:(j + 1) * columns]
            weights[j * columns:(j + 1) * columns] = part / c if c > 0 else 1.0
        out[base] = weights.astype(np.float32).astype(np.float64)
    return out


def decibels(signal, noise):
    if noise <= 0 or signal <= 0:
        return None
    return 10 * math.log10(signal / noise)


def figures(s):
    identical = s["d2"] == 0
    out = {"identical": identical,
           "rmse": math.sqrt(s["d2"] / s["n"]),
           "max_abs_error": s["max"],
           "relative_error": 0.0 if identical else (math.sqrt(s["d2"] / s["a2"]) if s["a2"] > 0 else None),
           "cosine": s["ab"] / math.sqrt(s["a2"] * s["b2"]) if s["a2"] > 0 and s["b2"] > 0 else None,
           "snr_db": decibels(s["a2"], s["d2"])}
    if s["wn"]:
        out["weighted_error"] = s["wd2"] / s["wa2"] if s["wa2"] > 0 else None
        out["weighted_snr_db"] = decibels(s["wa2"], s["wd2"])
    else:
        out["weighted_error"] = out["weighted_snr_db"] = None
    return out


def sums_of(ne, a, b, w):
    d = a - b
    s = {"n": a.size, "a2": float(np.sum(a * a)), "b2": float(np.sum(b * b)),
         "ab": float(np.sum(a * b)), "d2": float(np.sum(d * d)), "max": float(np.max(np.abs(d))),
         "wn": 0, "wa2": 0.0, "wd2": 0.0}
    experts = ne[2] if len(ne) > 2 else 1
    if w is not None and len(w) == ne[0] * experts:
        # Each row of expert e takes that expert's ne0 weights.
        per_row = np.broadcast_to(w.reshape(experts, 1, ne[0]),
                                  (experts, a.size // (ne[0] * experts), ne[0])).reshape(-1)
        s["wn"] = a.size
        s["wa2"] = float(np.sum(per_row * a * a))
        s["wd2"] = float(np.sum(per_row * d * d))
    return s


def main():
    a, b = Reader(sys.argv[1]).tensors, Reader(sys.argv[2]).tensors
    weights = importance(sys.argv[3]) if len(sys.argv) > 3 else {}
    tensors, total = {}, None
    for name, (ne, va) in a.items():
        if name not in b or trimmed(b[name][0]) != trimmed(ne):
            continue
        vb = b[name][1]
        if not (np.all(np.isfinite(va)) and np.all(np.isfinite(vb))):
            continue
        s = sums_of(ne, va, vb, weights.get(name))
        tensors[name] = figures(s)
        if total is None:
            total = dict(s)
        else:
            for k in ("n", "a2", "b2", "ab", "d2", "wn", "wa2", "wd2"):
                total[k] += s[k]
            total["max"] = max(total["max"], s["max"])
    json.dump({"tensors": tensors, "model": figures(total)}, sys.stdout)


if __name__ == "__main__":
    main()
