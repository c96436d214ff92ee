"""A minimal stand-in for the `transformers` package (Debian 12 has none), with exactly what
llama.cpp's convert_hf_to_gguf.py calls for the checkpoints bench_hf_arch.sh generates:

- AutoConfig.from_pretrained(dir).to_dict(): config.json as it is (the converter's own fallback
  when transformers fails reads it the same way; the real AutoConfig would add class defaults
  for keys the file lacks).
- AutoTokenizer.from_pretrained(dir), for tokenizer.json checkpoints (Qwen3): the vocabulary and
  added tokens read from tokenizer.json. It runs no tokenizer: encode() knows two kinds of text,
  the converter's pre-tokenizer check text, for which it returns QWEN3_CHECK_IDS, and an added
  token's own text, which is that token's id (so the converter's decode(encode(token)) round
  trip of non-normalized added tokens gives the token back, as the real tokenizer does).
  Anything else raises, so a converter that needs more fails loudly instead of being fed guesses.

QWEN3_CHECK_IDS are the ids Qwen3's real tokenizer.json (../shared/testdata/hf-arch/qwen3-bf16)
gives for get_vocab_base_pre's check text, computed once with @huggingface/transformers 4.3.1
(transformers.js) in node: 181 ids, whose sha256 as the converter hashes them
(e636dc30...2b8aea) is its entry for `qwen2`. They are only valid for that tokenizer.
"""
import json
import os

QWEN3_CHECK_IDS = [
    198, 4710, 14731, 65497, 7847, 1572, 2303, 78672, 10947, 145836, 320, 8252, 8, 26525, 114, 378,
    235, 149921, 30543, 320, 35673, 99066, 97534, 8, 25521, 227, 11162, 99, 247, 149955, 220, 18,
    220, 18, 18, 220, 18, 18, 18, 220, 18, 18, 18, 18, 220, 18, 18, 18, 18, 18, 220, 18, 18, 18,
    18, 18, 18, 220, 18, 18, 18, 18, 18, 18, 18, 220, 18, 18, 18, 18, 18, 18, 18, 18, 220, 18, 13,
    18, 220, 18, 496, 18, 220, 18, 1112, 18, 220, 146394, 97529, 241, 44258, 233, 146568, 44258,
    224, 147603, 20879, 115, 146280, 44258, 223, 146280, 147272, 97529, 227, 144534, 937, 104100,
    18493, 22377, 99257, 16, 18, 16, 19, 16, 20, 16, 35727, 21216, 55460, 53237, 18658, 14144,
    1456, 13073, 63471, 33594, 3038, 133178, 79012, 3355, 4605, 4605, 13874, 13874, 73594, 3014,
    3014, 28149, 17085, 2928, 26610, 7646, 358, 3003, 1012, 364, 83, 813, 566, 594, 1052, 11, 364,
    787, 498, 2704, 30, 364, 44, 537, 2704, 358, 3278, 1281, 432, 11, 364, 35, 498, 1075, 1045,
    15243, 30, 1205, 6, 42612, 264, 63866, 43,
]

_CHECK_TEXT_START = "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) "


class _Config:
    def __init__(self, values):
        self._values = values

    def to_dict(self):
        return dict(self._values)


class AutoConfig:
    @staticmethod
    def from_pretrained(path, **_):
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            return _Config(json.load(f))


class _AddedToken:
    def __init__(self, entry):
        self.content = entry["content"]
        self.special = entry.get("special", False)
        self.normalized = entry.get("normalized", True)
        self.lstrip = entry.get("lstrip", False)
        self.rstrip = entry.get("rstrip", False)
        self.single_word = entry.get("single_word", False)


class _Tokenizer:
    def __init__(self, path):
        with open(os.path.join(path, "tokenizer.json"), encoding="utf-8") as f:
            data = json.load(f)
        self.vocab = dict(data["model"]["vocab"])
        self.added_tokens_decoder = {}
        for entry in data.get("added_tokens", []):
            self.vocab[entry["content"]] = entry["id"]
            self.added_tokens_decoder[entry["id"]] = _AddedToken(entry)
        self._by_id = {i: t for t, i in self.vocab.items()}

    def get_vocab(self):
        return dict(self.vocab)

    def get_added_vocab(self):
        return {t.content: i for i, t in self.added_tokens_decoder.items()}

    def encode(self, text, add_special_tokens=True):
        del add_special_tokens  # Qwen3 adds no special token either way
        if text.startswith(_CHECK_TEXT_START):
            return list(QWEN3_CHECK_IDS)
        added = self.get_added_vocab()
        if text in added:
            return [added[text]]
        raise NotImplementedError("the transformers stand-in does not tokenize " + repr(text[:40]))

    def decode(self, ids):
        return "".join(self._by_id[i] for i in ids)


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, **_):
        return _Tokenizer(path)
