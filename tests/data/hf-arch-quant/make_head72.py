#!/usr/bin/python3
"""Writes head72-bf16.gguf: a llama-architecture GGUF whose attention heads are 72 wide, 2 of
them, so attn_output's rows (the first GGUF dimension, 2 x 72 = 144) are not a multiple of 32.
Q8_0 cannot store such a row: llama-quantize and convert_hf_to_gguf.py write that tensor F16.

    PYTHONPATH=/path/to/llama.cpp/gguf-py /usr/bin/python3 make_head72.py head72-bf16.gguf

Needs numpy and llama.cpp's gguf-py. Deterministic: the same bytes on every run."""
import sys

import numpy as np

import gguf

EMBED, HEADS, HEAD_DIM, FFN, VOCAB, LAYERS = 64, 2, 72, 128, 64, 2


def weights(rng, *shape):
    """N(0, 0.02) as the converter's test checkpoints have them, rounded to BF16."""
    values = rng.normal(0.0, 0.02, size=shape).astype(np.float32)
    return gguf.quants.quantize(values, gguf.GGMLQuantizationType.BF16)


def norm(rng):
    return (1.0 + rng.normal(0.0, 0.02, size=(EMBED,))).astype(np.float32)


def main(path):
    rng = np.random.RandomState(72)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("Head72 Bf16")
    writer.add_block_count(LAYERS)
    writer.add_context_length(4096)
    writer.add_embedding_length(EMBED)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_BF16)
    writer.add_vocab_size(VOCAB)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    bf16 = gguf.GGMLQuantizationType.BF16
    # numpy shapes are GGUF's dimensions reversed: (rows, row length).
    writer.add_tensor("token_embd.weight", weights(rng, VOCAB, EMBED), raw_dtype=bf16)
    for layer in range(LAYERS):
        blk = f"blk.{layer}."
        writer.add_tensor(blk + "attn_norm.weight", norm(rng))
        for proj in ("attn_q", "attn_k", "attn_v"):
            writer.add_tensor(blk + proj + ".weight", weights(rng, HEADS * HEAD_DIM, EMBED),
                              raw_dtype=bf16)
        writer.add_tensor(blk + "attn_output.weight", weights(rng, EMBED, HEADS * HEAD_DIM),
                          raw_dtype=bf16)
        writer.add_tensor(blk + "ffn_norm.weight", norm(rng))
        writer.add_tensor(blk + "ffn_gate.weight", weights(rng, FFN, EMBED), raw_dtype=bf16)
        writer.add_tensor(blk + "ffn_up.weight", weights(rng, FFN, EMBED), raw_dtype=bf16)
        writer.add_tensor(blk + "ffn_down.weight", weights(rng, EMBED, FFN), raw_dtype=bf16)
    writer.add_tensor("output_norm.weight", norm(rng))
    writer.add_tensor("output.weight", weights(rng, VOCAB, EMBED), raw_dtype=bf16)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main(sys.argv[1])
