"""Prints a GGUF file's tokenizer.* keys in file order, one line each: the key, its GGUF type
id, and the sha256 of the value's bytes as the file stores them (after the type id: a string's
length and bytes; an array's element type, count and elements; a scalar's little-endian bytes)."""
import hashlib, os, sys
sys.path.insert(0, os.environ["LLAMA_CPP"] + "/gguf-py")
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
for f in r.fields.values():
    if not f.name.startswith("tokenizer."): continue
    value = b"".join(bytes(p.tobytes()) for p in f.parts[3:])
    print(f"{f.name}\t{int(f.parts[2][0])}\t{hashlib.sha256(value).hexdigest()}")
