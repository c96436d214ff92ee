#!/usr/bin/env python3
"""Loads a directory written by ckhost's npy plugin: {tensor name: numpy array}.

    import load_npy
    weights = load_npy.load("model-npy")          # or, without this file:
    # idx = json.load(open("model-npy/index.json"))
    # weights = {t["name"]: np.load(f"model-npy/{t['file']}") for t in idx["tensors"]}

Run as a script, it loads every tensor and checks it against index.json and the file's own
bytes (shape, dtype, and that NumPy reads exactly the data ckhost wrote):

    python3 load_npy.py --check model-npy
"""
import json
import os
import sys

import numpy as np


def load(directory, mmap_mode="r"):
    """Every tensor, memory-mapped read-only by default (a model larger than RAM loads fine)."""
    with open(os.path.join(directory, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    return {t["name"]: np.load(os.path.join(directory, t["file"]), mmap_mode=mmap_mode)
            for t in index["tensors"]}


def check(directory):
    with open(os.path.join(directory, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    for t in index["tensors"]:
        path = os.path.join(directory, t["file"])
        array = np.load(path)
        if list(array.shape) != t["shape"]:
            raise SystemExit(f"{t['name']}: shape {array.shape}, index.json says {t['shape']}")
        if array.dtype != np.dtype(t["dtype"]):
            raise SystemExit(f"{t['name']}: dtype {array.dtype}, index.json says {t['dtype']}")
        with open(path, "rb") as f:
            raw = f.read()
        if raw[len(raw) - array.nbytes:] != array.tobytes():
            raise SystemExit(f"{t['name']}: NumPy read other bytes than the file's data")
    print(f"ok: {len(index['tensors'])} tensors")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    elif len(sys.argv) == 2:
        for name, array in load(sys.argv[1]).items():
            print(f"{name}\t{array.shape}\t{array.dtype}")
    else:
        raise SystemExit("usage: load_npy.py [--check] DIRECTORY")
