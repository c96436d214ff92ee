"""A minimal stand-in for the `transformers` package: exactly what llama.cpp's converter calls.

AutoConfig returns config.json as it is; AutoTokenizer reads tokenizer.json (vocabulary, added
tokens) and runs encode/decode through the real tokenizer, transformers.js in node."""
import json, os, subprocess
from pathlib import Path

# A folder where `npm install --ignore-scripts @huggingface/transformers@4.3.1` was run.
_JS = os.environ["TRANSFORMERS_JS"]
_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokserver.mjs")


class _Config:
    def __init__(self, d): self._d = d
    def to_dict(self): return dict(self._d)


class AutoConfig:
    @staticmethod
    def from_pretrained(path, **kw):
        with open(Path(path) / "config.json", encoding="utf-8") as f:
            return _Config(json.load(f))


class AddedToken:
    def __init__(self, d):
        self.content = d["content"]
        self.special = d.get("special", False)
        self.normalized = d.get("normalized", True)
        self.lstrip = d.get("lstrip", False)
        self.rstrip = d.get("rstrip", False)
        self.single_word = d.get("single_word", False)


class _Tokenizer:
    def __init__(self, path):
        path = Path(path)
        with open(path / "tokenizer.json", encoding="utf-8") as f:
            tj = json.load(f)
        self._added = tj.get("added_tokens", [])
        self.vocab = dict(tj["model"]["vocab"])
        for a in self._added:
            self.vocab[a["content"]] = a["id"]
        self.added_tokens_decoder = {a["id"]: AddedToken(a) for a in self._added}
        self._proc = subprocess.Popen(
            ["node", _SERVER, str(path.resolve())],
            cwd=_JS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def _ask(self, q):
        self._proc.stdin.write(json.dumps(q) + "\n")
        self._proc.stdin.flush()
        return json.loads(self._proc.stdout.readline())

    def get_vocab(self): return dict(self.vocab)
    def get_added_vocab(self): return {a["content"]: a["id"] for a in self._added}
    def encode(self, text, add_special_tokens=True):
        return self._ask({"op": "encode", "text": text, "add_special_tokens": add_special_tokens})
    def decode(self, ids): return self._ask({"op": "decode", "ids": list(ids)})


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path, **kw): return _Tokenizer(path)
