#!/usr/bin/env python3
"""Writes the committed fuzz seeds that tests/data has no small example of, with the ckhost of
a normal build: a tiny llama-shaped GGUF (F32, one layer, 16-wide) converted to bump (with its
config.json; and v4 with its manifest), GGUF-lite (q8, q4, f16), safetensors and a three-shard split set.

    python3 tests/fuzz/make_seeds.py build/bin/ckhost

Run again only to change the seeds; the outputs are committed (tests/fuzz/seeds/, split-set/).
"""
import json
import pathlib
import struct
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SEEDS = HERE / "seeds"
ALIGN = 32


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def tiny_llama(path):
    embd, ffn, heads, kv_heads, vocab = 16, 32, 2, 1, 8
    head_dim = embd // heads
    kv = [
        ("general.architecture", 8, gguf_string("llama")),
        ("general.name", 8, gguf_string("fuzz seed")),
        ("llama.block_count", 4, struct.pack("<I", 1)),
        ("llama.context_length", 4, struct.pack("<I", 32)),
        ("llama.embedding_length", 4, struct.pack("<I", embd)),
        ("llama.feed_forward_length", 4, struct.pack("<I", ffn)),
        ("llama.attention.head_count", 4, struct.pack("<I", heads)),
        ("llama.attention.head_count_kv", 4, struct.pack("<I", kv_heads)),
        ("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
        ("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
        ("tokenizer.ggml.model", 8, gguf_string("llama")),
        ("tokenizer.ggml.tokens", 9,
         struct.pack("<IQ", 8, vocab) + b"".join(gguf_string(f"t{i}") for i in range(vocab))),
        ("tokenizer.ggml.scores", 9,
         struct.pack("<IQ", 6, vocab) + b"".join(struct.pack("<f", -i) for i in range(vocab))),
        ("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 1)),
    ]
    tensors = [
        ("token_embd.weight", [embd, vocab]),
        ("blk.0.attn_norm.weight", [embd]),
        ("blk.0.attn_q.weight", [embd, embd]),
        ("blk.0.attn_k.weight", [embd, kv_heads * head_dim]),
        ("blk.0.attn_v.weight", [embd, kv_heads * head_dim]),
        ("blk.0.attn_output.weight", [embd, embd]),
        ("blk.0.ffn_norm.weight", [embd]),
        ("blk.0.ffn_gate.weight", [embd, ffn]),
        ("blk.0.ffn_up.weight", [embd, ffn]),
        ("blk.0.ffn_down.weight", [ffn, embd]),
        ("output_norm.weight", [embd]),
    ]
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)))
    for key, vtype, value in kv:
        out += gguf_string(key) + struct.pack("<I", vtype) + value
    offset, data = 0, bytearray()
    for i, (name, ne) in enumerate(tensors):
        count = 1
        for n in ne:
            count *= n
        out += gguf_string(name) + struct.pack("<I", len(ne))
        out += b"".join(struct.pack("<Q", n) for n in ne) + struct.pack("<IQ", 0, offset)
        values = b"".join(struct.pack("<f", ((i * 7 + k) % 13 - 6) / 8) for k in range(count))
        data += values + b"\0" * (-len(values) % ALIGN)
        offset = len(data)
    out += b"\0" * (-len(out) % ALIGN)
    path.write_bytes(bytes(out + data))


def run(ckhost, pipeline, src, dst):
    subprocess.run([ckhost, "--quiet", "--force", "--pipeline", pipeline, "-i", str(src), "-o",
                    str(dst)], check=True)


def main():
    ckhost = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model = tmp / "tiny.gguf"
        tiny_llama(model)
        (SEEDS / "gguf").mkdir(parents=True, exist_ok=True)
        (SEEDS / "gguf" / "tiny-llama-f32.gguf").write_bytes(model.read_bytes())

        # bump: the weights alone, and with config.json after the harness's marker line.
        run(ckhost, "gguf:bump", model, f"{tmp}/bump/")  # the slash: a directory
        weights = (tmp / "bump" / "weights.bump").read_bytes()
        config = (tmp / "bump" / "config.json").read_bytes()
        (SEEDS / "bump").mkdir(exist_ok=True)
        (SEEDS / "bump" / "tiny.bump").write_bytes(weights)
        (SEEDS / "bump" / "tiny-with-config.bump").write_bytes(weights + b"#config.json\n" + config)
        # bump v4: the weights alone, and with weights_manifest.json after its marker line (its
        # weights_path relative, so that it leads to the harness's weights.bump as verify checks).
        run(ckhost, "gguf:bump[version=4,weights_path=relative]", model, f"{tmp}/bump4/")
        weights = (tmp / "bump4" / "weights.bump").read_bytes()
        manifest = (tmp / "bump4" / "weights_manifest.json").read_bytes()
        (SEEDS / "bump" / "tiny-v4.bump").write_bytes(weights)
        (SEEDS / "bump" / "tiny-v4-with-manifest.bump").write_bytes(
            weights + b"#weights_manifest.json\n" + manifest)

        # GGUF-lite files, and their metadata sections for the metadata-text target.
        (SEEDS / "gguflite").mkdir(exist_ok=True)
        (SEEDS / "gguflite_metadata").mkdir(exist_ok=True)
        for scheme in ("q8", "q4", "f16"):
            out = tmp / f"tiny-{scheme}.gguflite"
            run(ckhost, f"gguf:gguflite[scheme={scheme}]", model, out)
            data = out.read_bytes()
            (SEEDS / "gguflite" / out.name).write_bytes(data)
            metadata_len = struct.unpack_from("<I", data, 12)[0]
            (SEEDS / "gguflite_metadata" / f"tiny-{scheme}.txt").write_bytes(
                data[16:16 + metadata_len])

        # safetensors, in the harness's form: header JSON, NUL, data.
        out = tmp / "tiny.safetensors"
        run(ckhost, "gguf:safetensors", model, out)
        data = out.read_bytes()
        header_len = struct.unpack_from("<Q", data, 0)[0]
        json.loads(data[8:8 + header_len])
        (SEEDS / "safetensors" / "tiny.txt").write_bytes(
            data[8:8 + header_len] + b"\0" + data[8 + header_len:])

        # A three-shard split set (4 tensors a shard): the siblings the split target writes its
        # input beside, and seeds with each control byte (replaced shard, opened shard).
        split_dir = HERE / "split-set"
        split_dir.mkdir(exist_ok=True)
        run(ckhost, "gguf:gguf[split_max_tensors=4]", model, split_dir / "tiny.gguf")
        shards = sorted(split_dir.glob("tiny-0000?-of-00003.gguf"))
        assert len(shards) == 3, shards
        (SEEDS / "gguf_split").mkdir(exist_ok=True)
        for replaced, shard in enumerate(shards):
            for opened in range(3):
                control = bytes([replaced | opened << 2])
                (SEEDS / "gguf_split" / f"shard{replaced + 1}-open{opened + 1}.bin").write_bytes(
                    control + shard.read_bytes())


if __name__ == "__main__":
    main()
