#!/usr/bin/env python3
"""Writes a TinyLlama-1.1B-shaped Hugging Face checkpoint in BF16 (2.2 GB) for bench_hf.sh:
config.json, two safetensors shards with model.safetensors.index.json, a SentencePiece
tokenizer.model of 32000 pieces and tokenizer_config.json. Standard library only.

The weights are one MiB of valid BF16 values (small, finite) repeated: the conversion's speed
does not depend on them, and writing 2.2 GB of generated random numbers in Python would take
minutes.

    make_hf_checkpoint.py OUT_DIR
"""
import json
import os
import random
import struct
import sys

HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, VOCAB = 2048, 5632, 22, 32, 4, 32000


def tensors():
    kv = HIDDEN // HEADS * KV_HEADS
    yield "model.embed_tokens.weight", [VOCAB, HIDDEN]
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", [HIDDEN]
        yield p + "self_attn.q_proj.weight", [HIDDEN, HIDDEN]
        yield p + "self_attn.k_proj.weight", [kv, HIDDEN]
        yield p + "self_attn.v_proj.weight", [kv, HIDDEN]
        yield p + "self_attn.o_proj.weight", [HIDDEN, HIDDEN]
        yield p + "post_attention_layernorm.weight", [HIDDEN]
        yield p + "mlp.gate_proj.weight", [FFN, HIDDEN]
        yield p + "mlp.up_proj.weight", [FFN, HIDDEN]
        yield p + "mlp.down_proj.weight", [HIDDEN, FFN]
    yield "model.norm.weight", [HIDDEN]
    yield "lm_head.weight", [VOCAB, HIDDEN]


def bf16_block(size):
    rng = random.Random(19)
    values = [struct.unpack("<I", struct.pack("<f", rng.gauss(0, 0.02)))[0] >> 16
              for _ in range(size // 2)]
    return struct.pack(f"<{len(values)}H", *values)


def write_shard(path, entries, block):
    header, offset = {}, 0
    for name, shape in entries:
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        left = offset
        while left:
            chunk = block[:min(left, len(block))]
            f.write(chunk)
            left -= len(chunk)
    return offset


def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def piece(text, score, kind):
    body = b"\x0a" + varint(len(text.encode())) + text.encode()
    body += b"\x15" + struct.pack("<f", score) + b"\x18" + varint(kind)
    return b"\x0a" + varint(len(body)) + body


def tokenizer_model(path):
    pieces = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    pieces += [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    while len(pieces) < VOCAB:
        pieces.append((f"\u2581t{len(pieces)}", -float(len(pieces)), 1))
    with open(path, "wb") as f:
        f.write(b"".join(piece(*p) for p in pieces))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": HIDDEN, "intermediate_size": FFN, "num_hidden_layers": LAYERS,
              "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
              "vocab_size": VOCAB, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "tie_word_embeddings": False, "bos_token_id": 1,
              "eos_token_id": 2, "torch_dtype": "bfloat16"}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"add_bos_token": True, "add_eos_token": False}, f)
    tokenizer_model(os.path.join(out, "tokenizer.model"))
    entries = list(tensors())
    half = len(entries) // 2
    block = bf16_block(1 << 20)
    weight_map, total = {}, 0
    for k, part in enumerate((entries[:half], entries[half:])):
        name = f"model-{k + 1:05d}-of-00002.safetensors"
        total += write_shard(os.path.join(out, name), part, block)
        weight_map.update({t: name for t, _ in part})
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)


if __name__ == "__main__":
    main()
