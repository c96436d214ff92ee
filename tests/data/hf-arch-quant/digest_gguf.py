#!/usr/bin/python3
"""Prints a GGUF file's digest list: the file's size and SHA-256, then each tensor in file order
with its type, shape (ggml's ne order, innermost first) and the SHA-256 of its data. Used for
llama-quantize outputs too large to commit (README.md).

    PYTHONPATH=/path/to/llama.cpp/gguf-py /usr/bin/python3 digest_gguf.py FILE.gguf > FILE.sha256"""
import hashlib
import sys

import gguf


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    print(f"file\t{len(data)}\t{hashlib.sha256(data).hexdigest()}")
    for t in gguf.GGUFReader(path).tensors:
        start = t.data_offset
        shape = ",".join(str(int(n)) for n in t.shape)
        digest = hashlib.sha256(data[start:start + int(t.n_bytes)]).hexdigest()
        print(f"{t.name}\t{t.tensor_type.name.lower()}\t{shape}\t{digest}")


if __name__ == "__main__":
    main(sys.argv[1])
