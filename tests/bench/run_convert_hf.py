#!/usr/bin/env python3
"""Runs llama.cpp's convert_hf_to_gguf.py, unchanged, from its source tree on Debian 12's
python3-torch 1.13: with the transformers stand-in of converter_standin/ on the path (Debian
has no transformers package) and placeholders for the float8 dtypes torch 1.13 lacks (the
converter names them in a dtype table; none of bench_hf_arch.sh's checkpoints has FP8 tensors,
and a placeholder equals no real dtype). The source tree's own gguf-py is used.

    run_convert_hf.py LLAMA_CPP_SRC CONVERTER_ARGS...
"""
import os
import runpy
import sys

import torch


class _Float8Placeholder:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "placeholder for torch." + self.name


def main():
    sys.dont_write_bytecode = True  # no __pycache__ in the source trees
    src = os.path.abspath(sys.argv[1])
    for name in ("float8_e4m3fn", "float8_e5m2"):
        if not hasattr(torch, name):
            setattr(torch, name, _Float8Placeholder(name))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [os.path.join(here, "converter_standin"), src, os.path.join(src, "gguf-py")]
    script = os.path.join(src, "convert_hf_to_gguf.py")
    sys.argv = [script] + sys.argv[2:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
