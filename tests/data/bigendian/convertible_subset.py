#!/usr/bin/env python3
"""Copies a GGUF's metadata and those of its tensors whose types gguf_convert_endian.py converts,
written by gguf-py's GGUFWriter, so that the script can then make the big-endian file.

    convertible_subset.py SOURCE.gguf DEST.gguf [--max-array N]

Keys gguf-py cannot write (empty arrays) are left out, and so are arrays of more than N elements
(default: all kept) to keep the committed files small. Needs gguf-py (llama.cpp's gguf-py folder
on PYTHONPATH) and numpy.
"""
import argparse

import numpy as np

import gguf

CONVERTIBLE = {gguf.GGMLQuantizationType[name] for name in
               "F32 F16 BF16 Q4_0 Q8_0 Q4_K Q6_K TQ2_0 Q1_0 MXFP4 NVFP4".split()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("dest")
    parser.add_argument("--max-array", type=int, default=None)
    args = parser.parse_args()

    reader = gguf.GGUFReader(args.source)
    writer = gguf.GGUFWriter(args.dest, arch=None)
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        kind = field.types[0]
        if field.name == "general.alignment":
            # The writer lays the file out by its own alignment, which this sets (with the key).
            writer.add_custom_alignment(int(field.contents()))
        elif kind == gguf.GGUFValueType.ARRAY:
            if not field.data or (args.max_array is not None and len(field.data) > args.max_array):
                continue
            writer.add_key_value(field.name, field.contents(), kind, sub_type=field.types[-1])
        else:
            writer.add_key_value(field.name, field.contents(), kind)
    for tensor in reader.tensors:
        if tensor.tensor_type in CONVERTIBLE:
            writer.add_tensor(tensor.name, np.asarray(tensor.data), raw_shape=tensor.data.shape,
                              raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
