#!/usr/bin/env python3
"""Writes a BF16 Hugging Face checkpoint shaped like a real model, for the benchmarks (into a
directory outside the repository). Standard library only.

    make_hf_checkpoint.py OUT_DIR [SHAPE [TOKENIZER_DIR]]

SHAPE:
  tinyllama   (default; bench_hf.sh) TinyLlama-1.1B: LlamaForCausalLM, 22 layers, hidden 2048,
              FFN 5632, 32 / 4 heads, vocab 32000, untied; 2.2 GB in two shards with
              model.safetensors.index.json; its own SentencePiece tokenizer.model of 32000
              pieces and tokenizer_config.json.
  llama32-1b  (bench_hf_arch.sh) Llama-3.2-1B: 16 layers, hidden 2048, FFN 8192, 32 / 8 heads,
              head_dim 64, vocab 128256, tied embeddings, rope_scaling llama3 (factor 32, low 1,
              high 4, original 8192), rope_theta 500000; 2.47 GB in one model.safetensors, as
              Meta ships it.
  qwen3moe    (bench_hf_arch.sh) Qwen3-30B-A3B's layout at half its hidden size: 3 layers,
              hidden 1024, 16 / 4 heads, head_dim 128, q_norm / k_norm, 128 experts (8 used) of
              moe_intermediate_size 768 and router mlp.gate in every layer, vocab 151936,
              untied; 2.47 GB in two shards, layer 1's experts split between them.

The last two copy config.json's keys from the matching hf-arch checkpoint in TOKENIZER_DIR
(../shared/testdata/hf-arch: llama31-bf16, qwen3moe-bf16) with the sizes above, and take its
tokenizer files: llama31-bf16's SentencePiece tokenizer.model (512 pieces; vocab_size 128256
pads the rest, as the converter does for any SentencePiece vocabulary shorter than
vocab_size, so bos/eos stay that tokenizer's 1 and 2) and qwen3-bf16's real Qwen3
tokenizer.json.

The weights are one MiB of valid BF16 values (N(0, 0.02), finite) repeated: the conversion's
speed does not depend on them, and writing gigabytes of generated random numbers in Python would
take minutes.
"""
import json
import os
import random
import shutil
import struct
import sys

TINYLLAMA = dict(hidden=2048, ffn=5632, layers=22, heads=32, kv_heads=4, vocab=32000)
LLAMA32_1B = dict(hidden=2048, ffn=8192, layers=16, heads=32, kv_heads=8, head_dim=64,
                  vocab=128256)
QWEN3MOE = dict(hidden=1024, ffn=3072, layers=3, heads=16, kv_heads=4, head_dim=128,
                vocab=151936, experts=128, experts_used=8, expert_ffn=768)


def attention(p, s):
    head_dim = s.get("head_dim", s["hidden"] // s["heads"])
    yield p + "self_attn.q_proj.weight", [s["heads"] * head_dim, s["hidden"]]
    yield p + "self_attn.k_proj.weight", [s["kv_heads"] * head_dim, s["hidden"]]
    yield p + "self_attn.v_proj.weight", [s["kv_heads"] * head_dim, s["hidden"]]
    yield p + "self_attn.o_proj.weight", [s["hidden"], s["heads"] * head_dim]


def dense_mlp(p, s):
    yield p + "mlp.gate_proj.weight", [s["ffn"], s["hidden"]]
    yield p + "mlp.up_proj.weight", [s["ffn"], s["hidden"]]
    yield p + "mlp.down_proj.weight", [s["hidden"], s["ffn"]]


def moe_mlp(p, s):
    yield p + "mlp.gate.weight", [s["experts"], s["hidden"]]
    for e in range(s["experts"]):
        q = f"{p}mlp.experts.{e}."
        yield q + "gate_proj.weight", [s["expert_ffn"], s["hidden"]]
        yield q + "up_proj.weight", [s["expert_ffn"], s["hidden"]]
        yield q + "down_proj.weight", [s["hidden"], s["expert_ffn"]]


def tensors(s, moe=False, qk_norm=False, tied=False):
    """Hugging Face names and shapes in the model's module order."""
    yield "model.embed_tokens.weight", [s["vocab"], s["hidden"]]
    for i in range(s["layers"]):
        p = f"model.layers.{i}."
        yield from attention(p, s)
        if qk_norm:
            yield p + "self_attn.q_norm.weight", [s["head_dim"]]
            yield p + "self_attn.k_norm.weight", [s["head_dim"]]
        yield from (moe_mlp if moe else dense_mlp)(p, s)
        yield p + "input_layernorm.weight", [s["hidden"]]
        yield p + "post_attention_layernorm.weight", [s["hidden"]]
    yield "model.norm.weight", [s["hidden"]]
    if not tied:
        yield "lm_head.weight", [s["vocab"], s["hidden"]]


def tinyllama_tensors(s):
    """The order of this script's first version (each layer's norms around its attention), kept
    so that bench_hf.sh's checkpoint stays byte for byte what it was."""
    yield "model.embed_tokens.weight", [s["vocab"], s["hidden"]]
    for i in range(s["layers"]):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", [s["hidden"]]
        yield from attention(p, s)
        yield p + "post_attention_layernorm.weight", [s["hidden"]]
        yield from dense_mlp(p, s)
    yield "model.norm.weight", [s["hidden"]]
    yield "lm_head.weight", [s["vocab"], s["hidden"]]


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


def tensor_bytes(shape):
    n = 2
    for d in shape:
        n *= d
    return n


def split_by_bytes(entries, count):
    """`count` runs of entries of about equal size."""
    total = sum(tensor_bytes(shape) for _, shape in entries)
    parts, part, size = [], [], 0
    for entry in entries:
        if size >= total * (len(parts) + 1) / count and len(parts) < count - 1:
            parts.append(part)
            part = []
        part.append(entry)
        size += tensor_bytes(entry[1])
    return parts + [part]


def write_weights(out, parts):
    """One model.safetensors, or a shard per part with model.safetensors.index.json."""
    block = bf16_block(1 << 20)
    if len(parts) == 1:
        write_shard(os.path.join(out, "model.safetensors"), parts[0], block)
        return
    weight_map, written = {}, 0
    for k, part in enumerate(parts):
        name = f"model-{k + 1:05d}-of-{len(parts):05d}.safetensors"
        written += write_shard(os.path.join(out, name), part, block)
        weight_map.update({t: name for t, _ in part})
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": written}, "weight_map": weight_map}, f, indent=2)


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


def tokenizer_model(path, vocab):
    pieces = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    pieces += [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    while len(pieces) < vocab:
        pieces.append((f"\u2581t{len(pieces)}", -float(len(pieces)), 1))
    with open(path, "wb") as f:
        f.write(b"".join(piece(*p) for p in pieces))


def write_json(path, value, **options):
    with open(path, "w") as f:
        json.dump(value, f, **options)


def make_tinyllama(out, _):
    s = TINYLLAMA
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": s["hidden"], "intermediate_size": s["ffn"],
              "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
              "num_key_value_heads": s["kv_heads"], "vocab_size": s["vocab"],
              "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
              "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
              "torch_dtype": "bfloat16"}
    write_json(os.path.join(out, "config.json"), config, indent=2)
    write_json(os.path.join(out, "tokenizer_config.json"),
               {"add_bos_token": True, "add_eos_token": False})
    tokenizer_model(os.path.join(out, "tokenizer.model"), s["vocab"])
    entries = list(tinyllama_tensors(s))
    write_weights(out, [entries[:len(entries) // 2], entries[len(entries) // 2:]])


def from_reference(out, reference, tokenizer_folder, files, changes):
    """config.json of hf-arch's `reference` with `changes`, and `files` of `tokenizer_folder`."""
    with open(os.path.join(reference, "config.json")) as f:
        config = json.load(f)
    config.update(changes)
    write_json(os.path.join(out, "config.json"), config, indent=2, sort_keys=True)
    for name in files:
        shutil.copyfile(os.path.join(tokenizer_folder, name), os.path.join(out, name))


def make_llama32_1b(out, hf_arch):
    s = LLAMA32_1B
    rope = {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192, "rope_type": "llama3"}
    from_reference(out, os.path.join(hf_arch, "llama31-bf16"),
                   os.path.join(hf_arch, "llama31-bf16"),
                   ["tokenizer.model", "tokenizer_config.json"],
                   {"hidden_size": s["hidden"], "intermediate_size": s["ffn"],
                    "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
                    "num_key_value_heads": s["kv_heads"], "head_dim": s["head_dim"],
                    "vocab_size": s["vocab"], "rope_scaling": rope,
                    "tie_word_embeddings": True, "transformers_version": "4.45.0.dev0"})
    write_weights(out, [list(tensors(s, tied=True))])


def make_qwen3moe(out, hf_arch):
    s = QWEN3MOE
    from_reference(out, os.path.join(hf_arch, "qwen3moe-bf16"),
                   os.path.join(hf_arch, "qwen3-bf16"),
                   ["tokenizer.json", "tokenizer_config.json"],
                   {"hidden_size": s["hidden"], "intermediate_size": s["ffn"],
                    "num_hidden_layers": s["layers"], "max_window_layers": s["layers"],
                    "num_attention_heads": s["heads"], "num_key_value_heads": s["kv_heads"],
                    "head_dim": s["head_dim"], "vocab_size": s["vocab"],
                    "num_experts": s["experts"], "num_experts_per_tok": s["experts_used"],
                    "moe_intermediate_size": s["expert_ffn"]})
    write_weights(out, split_by_bytes(list(tensors(s, moe=True, qk_norm=True)), 2))


SHAPES = {"tinyllama": make_tinyllama, "llama32-1b": make_llama32_1b, "qwen3moe": make_qwen3moe}


def main():
    if len(sys.argv) < 2 or len(sys.argv) > 4 or (len(sys.argv) > 2 and sys.argv[2] not in SHAPES):
        sys.exit(__doc__)
    out = sys.argv[1]
    shape = sys.argv[2] if len(sys.argv) > 2 else "tinyllama"
    here = os.path.dirname(os.path.abspath(__file__))
    hf_arch = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        here, "..", "..", "..", "shared", "testdata", "hf-arch")
    os.makedirs(out, exist_ok=True)
    SHAPES[shape](out, hf_arch)


if __name__ == "__main__":
    main()
