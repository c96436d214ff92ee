#!/usr/bin/env python3
"""examples/gguflite_read.py against ckhost itself, on real GGUF-lite files ckhost wrote.

usage: check_python_reader.py CKHOST EXAMPLES_DIR SHARED_TESTDATA

For the micro model (always) and the tiny llama of SHARED_TESTDATA (when it is there): write
GGUF-lite with ckhost (q4, and a mix of q8, q4, f16 and f32), dequantize it with ckhost's own
reader (gguflite:safetensors, F32 and F16 tensors), dump it with the Python reader (with
numpy when an interpreter here has it, and with --no-numpy), and require every tensor's values, name
and dims to be the same, bit for bit. Exit 0 when they all are.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

failures = []


def numpy_python():
    """An interpreter that has numpy (this one, or the system's), to check that path too."""
    for python in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if python and subprocess.run([python, "-c", "import numpy"],
                                     capture_output=True).returncode == 0:
            return python
    return None


NUMPY_PYTHON = numpy_python()


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)


def run(args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result.stdout


def safetensors_values(path):
    """{name: (shape, f32 bytes)} of a safetensors file of F32 and F16 tensors."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack_from("<Q", data)
    header = json.loads(data[8:8 + size])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        if entry["dtype"] == "F16":  # widened exactly, as the Python reader widens it
            n = len(raw) // 2
            raw = struct.pack(f"<{n}f", *struct.unpack(f"<{n}e", raw))
        else:
            check(entry["dtype"] == "F32", f"{name}: unexpected dtype {entry['dtype']}")
        out[name] = (entry["shape"], raw)
    return out


def compare(ckhost, reader, gguf, work, pipeline, label, want_dtypes):
    lite = os.path.join(work, label + ".gguflite")
    st = os.path.join(work, label + ".safetensors")
    run([ckhost, "-q", "--pipeline", pipeline, "-i", gguf, "-o", lite])
    run([ckhost, "-q", "--pipeline", "gguflite:safetensors", "-i", lite, "-o", st])
    expected = safetensors_values(st)
    modes = [(sys.executable, ["--no-numpy"])]
    if NUMPY_PYTHON:
        modes.append((NUMPY_PYTHON, []))
    for python, mode in modes:
        failed_before = len(failures)
        dump = os.path.join(work, label + "-dump" + "".join(mode))
        summary = json.loads(run([python, reader, lite, "--dump", dump] + mode))
        with open(os.path.join(dump, "manifest.json")) as f:
            manifest = json.load(f)["tensors"]
        how = f"{label} {' '.join(mode) or 'numpy'}"
        check(len(manifest) == len(expected),
              f"{how}: {len(manifest)} tensors dumped, ckhost has {len(expected)}")
        check(sorted(os.listdir(dump)) == sorted([m["file"] for m in manifest] + ["manifest.json"]),
              f"{how}: the dump holds other files than the manifest lists")
        dtypes = set()
        for m, t in zip(manifest, summary["tensors"]):
            name = m["name"]
            check(m["file"] == name + ".f32", f"{how}: {name} dumped as {m['file']}")
            check(name in expected, f"{how}: {name} is not in ckhost's output")
            if name not in expected:
                continue
            shape, values = expected[name]
            check(m["dims"] == shape, f"{how}: {name} dims {m['dims']}, ckhost says {shape}")
            with open(os.path.join(dump, m["file"]), "rb") as f:
                check(f.read() == values, f"{how}: {name}: values differ from ckhost's")
            check(t["sha256_f32"] == m["sha256_f32"], f"{how}: {name}: summary and manifest")
            dtypes.add(m["stored_dtype"])
        check(dtypes == want_dtypes, f"{how}: stored dtypes {sorted(dtypes)}, expected "
                                     f"{sorted(want_dtypes)}")
        if len(failures) == failed_before:
            print(f"ok: {how}: {len(manifest)} tensors, {sorted(dtypes)}")


def main():
    ckhost, examples, shared = sys.argv[1:4]
    reader = os.path.join(examples, "gguflite_read.py")
    models = [os.path.join(examples, "micro-llama-q4_k_m.gguf")]
    tiny = os.path.join(shared, "tiny-llama-q4_k_m.gguf")
    if not NUMPY_PYTHON:
        print("note: no python3 with numpy here: checking the standard-library decoder only")
    if os.path.exists(tiny):
        models.append(tiny)
    else:
        print(f"note: {tiny} is absent: checking the micro model only")
    with tempfile.TemporaryDirectory() as work:
        schemes = os.path.join(work, "schemes.json")
        with open(schemes, "w") as f:
            json.dump({"*attn_q*": "q8", "*ffn_down*": "f16", "output.weight": "f32"}, f)
        for i, model in enumerate(models):
            compare(ckhost, reader, model, work, "gguf:gguflite", f"m{i}-q4",
                    {"Q4_per_group_64", "F32"})
            compare(ckhost, reader, model, work, f"gguf:gguflite[keep=f16,schemes={schemes}]",
                    f"m{i}-mixed", {"Q4_per_group_64", "Q8_per_channel", "F16", "F32"})
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
