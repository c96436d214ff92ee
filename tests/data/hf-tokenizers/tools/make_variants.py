"""Post-processor variants on hf-arch/llama31-bf16 (SentencePiece; the converter still reads
tokenizer.json for SpecialVocab): each a tokenizer.json (added tokens + post_processor), and
where it changes, tokenizer_config.json / config.json."""
import json, os, shutil
ARCH = os.environ["HF_ARCH"] + "/llama31-bf16"
base_tc = json.load(open(ARCH + "/tokenizer_config.json"))
base_cfg = json.load(open(ARCH + "/config.json"))

def tok(i, c, s=True):
    return {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": s}
def st(t, type_id=0): return {"SpecialToken": {"id": t, "type_id": type_id}}
def sq(s, type_id=0): return {"Sequence": {"id": s, "type_id": type_id}}
added = [tok(0, "<unk>"), tok(1, "<s>"), tok(2, "</s>")]

def write(name, tj, tc=None, cfg=None):
    os.makedirs(name, exist_ok=True)
    with open(name + "/tokenizer.json", "w") as f: f.write(json.dumps(tj, indent=2) + "\n")
    if tc is not None:
        with open(name + "/tokenizer_config.json", "w") as f: f.write(json.dumps(tc, indent=2) + "\n")
    if cfg is not None:
        with open(name + "/config.json", "w") as f: f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")

# RobertaProcessing: bos, eos, sep added; cls/sep texts from the processor; a BertNormalizer.
tc = {k: v for k, v in base_tc.items() if k not in ("add_bos_token", "add_eos_token")}
write("pp-roberta", {"version": "1.0", "added_tokens": added,
      "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                     "strip_accents": False, "lowercase": True},
      "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1],
                         "trim_offsets": True, "add_prefix_space": False}}, tc)

# TemplateProcessing ending in another token than the config's eos (which becomes eot), and a
# pair template that separates with it (add_sep); Lowercase + StripAccents in a Sequence.
tc = {k: v for k, v in base_tc.items() if k != "add_eos_token"}
write("pp-template-eos", {"version": "1.0", "added_tokens": added + [tok(511, "<|eot|>")],
      "normalizer": {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "StripAccents"}]},
      "post_processor": {"type": "TemplateProcessing",
          "single": [st("<s>"), sq("A"), st("<|eot|>")],
          "pair": [st("<s>"), sq("A"), st("<|eot|>"), st("<|eot|>", 1), sq("B", 1), st("<|eot|>", 1)],
          "special_tokens": {}}}, tc)

# A leading token the config does not name: it becomes bos and cls; ids from config.json's
# text_config where the root has none.
tc = {k: v for k, v in base_tc.items() if k not in ("bos_token", "add_bos_token")}
cfg = {k: v for k, v in base_cfg.items() if k != "eos_token_id"}
cfg["text_config"] = {"pad_token_id": 0, "eos_token_id": 2}
write("pp-template-nobos", {"version": "1.0", "added_tokens": added + [tok(510, "<|start|>")],
      "post_processor": {"type": "Sequence", "processors": [
          {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
          {"type": "TemplateProcessing", "single": [st("<|start|>"), sq("A")],
           "pair": [st("<|start|>"), sq("A"), sq("B", 1)], "special_tokens": {}}]}}, tc, cfg)

# Llama's class writes tokenizer_config.json's add_prefix_space (tokenizer.ggml.add_space_prefix)
# before every other tokenizer key; no tokenizer.json.
tc = dict(base_tc, add_prefix_space=False)
os.makedirs("llama-add-prefix-space", exist_ok=True)
with open("llama-add-prefix-space/tokenizer_config.json", "w") as f: f.write(json.dumps(tc, indent=2) + "\n")

# Phi-3's rules for added tokens, on hf-arch/phi3-bf16: a looking-special token that is not
# `special`, U+2581 in a user-defined one, tokenizer.json's added tokens (one overriding the
# config's) and added_tokens.json (one id beyond vocab_size).
PHI3 = os.environ["HF_ARCH"] + "/phi3-bf16"
tc = json.load(open(PHI3 + "/tokenizer_config.json"))
d = tc["added_tokens_decoder"]
d["514"]["special"] = False
plain = {"lstrip": False, "normalized": False, "rstrip": False, "single_word": False}
d["523"] = dict(plain, content="\u2581hello", special=False)
d["524"] = dict(plain, content="<mask>", special=False)
os.makedirs("phi3-variant", exist_ok=True)
with open("phi3-variant/tokenizer_config.json", "w") as f:
    f.write(json.dumps(tc, indent=2, ensure_ascii=False) + "\n")
tj = {"version": "1.0", "added_tokens": [tok(512, "<|endoftext|>"), tok(515, "<|placeholder2|>", False),
                                          tok(525, "<|tool|>"), tok(526, "\u2581world", False)]}
with open("phi3-variant/tokenizer.json", "w") as f: f.write(json.dumps(tj, indent=2, ensure_ascii=False) + "\n")
with open("phi3-variant/added_tokens.json", "w") as f: f.write(json.dumps({"<|extra|>": 527, "beyond": 600}, indent=2) + "\n")
