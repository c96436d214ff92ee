"""Runs llama.cpp's convert_hf_to_gguf.py unchanged, with torch 1.13's missing float8 dtypes as
placeholders equal to no real dtype and the transformers stand-in on the path."""
import os, runpy, sys, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the transformers stand-in
class _Placeholder:
    def __init__(self, n): self.n = n
    def __repr__(self): return "placeholder " + self.n
for n in ("float8_e4m3fn", "float8_e5m2"):
    if not hasattr(torch, n): setattr(torch, n, _Placeholder(n))
src = os.environ["LLAMA_CPP"]
sys.path.insert(0, src); sys.path.insert(0, src + "/gguf-py")
sys.argv = [src + "/convert_hf_to_gguf.py"] + sys.argv[1:]
runpy.run_path(src + "/convert_hf_to_gguf.py", run_name="__main__")
