#!/usr/bin/env python3
"""Writes numpy-bf16-to-f16.bin: numpy's float16 bits (little-endian uint16) of every BF16 bit
pattern 0..65535 in order, each widened to float32 exactly (the pattern << 16) and converted
with astype(np.float16), the call gguf-py makes for every F16 tensor llama.cpp's converters
write.

    python3 make_numpy_table.py [OUT]     (Debian 12's python3-numpy 1.24.2)
"""
import sys

import numpy as np

bf16 = np.arange(65536, dtype=np.uint32)
with np.errstate(all="ignore"):  # overflow to infinity warns; the bits are what we want
    f16 = (bf16 << 16).view(np.float32).astype(np.float16)
f16.view(np.uint16).astype("<u2").tofile(sys.argv[1] if len(sys.argv) > 1 else "numpy-bf16-to-f16.bin")
