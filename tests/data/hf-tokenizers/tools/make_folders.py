"""Checkpoint folders with a real tokenizer.json in place of tokenizer.model: the hf-arch
checkpoint's config and weights, vocab_size raised to hold the tokenizer, embedding (and
lm_head) rows extended with N(0, 0.02) BF16 values."""
import json, os, shutil, struct, sys
from pathlib import Path
import numpy as np

ARCH = Path(os.environ["HF_ARCH"])  # ../shared/testdata/hf-arch
CACHE = Path(os.environ["CKHOST_TOKENIZER_CACHE"])  # scripts/fetch-tokenizers.sh's folder

def read_st(path):
    b = path.read_bytes(); n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]

def bf16(a):
    u = a.astype(np.float32).view(np.uint32)
    r = ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r.tobytes()

def make(src, dst, pkg, vocab_size, grow, config_edits={}):
    dst = Path(dst); shutil.rmtree(dst, ignore_errors=True); dst.mkdir(parents=True)
    cfg = json.loads((ARCH / src / "config.json").read_text())
    cfg["vocab_size"] = vocab_size
    cfg.update(config_edits)
    (dst / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(CACHE / pkg / "package/models" / f, dst / f)
    header, data = read_st(ARCH / src / "model.safetensors")
    rng = np.random.default_rng(29)
    out_h, out = {}, bytearray()
    for name, e in header.items():
        if name == "__metadata__": continue
        raw = data[e["data_offsets"][0]:e["data_offsets"][1]]
        shape = list(e["shape"])
        if name in grow:
            extra = vocab_size - shape[0]
            raw = raw + bf16(rng.normal(0, 0.02, size=(extra, shape[1])))
            shape[0] = vocab_size
        out_h[name] = {"dtype": e["dtype"], "shape": shape, "data_offsets": [len(out), len(out) + len(raw)]}
        out += raw
    h = json.dumps(out_h).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    with open(dst / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h); f.write(out)

make("llama31-bf16", "llama31-tokjson", "tokenizer-llama3_1-3.7.2", 128256, {"model.embed_tokens.weight", "lm_head.weight"},
     {"bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009]})  # Llama 3.1's
make("gemma3-bf16", "gemma3-tokjson", "tokenizer-gemma3-3.7.2", 262208, {"model.embed_tokens.weight"})
