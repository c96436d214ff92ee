#!/usr/bin/python3
"""Writes names.tsv: the general.* naming keys llama.cpp's converter writes for a checkpoint
folder and its config.json's `_name_or_path`, computed by gguf-py itself.

For each row it makes the folder (with a config.json holding only `_name_or_path`, or nothing
when the row has none), runs what the converter's ModelBase.prepare_metadata runs without
overrides or a model card (gguf.Metadata.load, the folder-name fallback for general.name,
gguf.size_label from the parameter counts), writes the result with Metadata.set_gguf_meta_model
into a real GGUFWriter, and records the keys it wrote.

    PYTHONPATH=<llama.cpp>/gguf-py /usr/bin/python3 make_names.py > names.tsv

Cells are JSON (strings quoted); an empty cell is a key the converter does not write (for
name_or_path: a config.json without the key).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

import gguf

ABSENT = object()

# The keys set_gguf_meta_model can write from a folder name and config.json, in its order.
KEYS = ["general.name", "general.author", "general.version", "general.organization",
        "general.finetune", "general.basename", "general.size_label"]

# (folder as given to the converter, _name_or_path, total, shared, expert, expert_count).
# Counts: what gguf-py's get_total_parameter_count returns (expert = elements of one expert);
# for Hub models the published checkpoint's counts, for our test folders the reference files'.
ROWS = [
    # today's checkpoints under their Hub names, with their real sizes
    ("Meta-Llama-3.1-8B-Instruct", ABSENT, 8030261248, 8030261248, 0, 0),
    ("Qwen3-30B-A3B", ABSENT, 30532122624, 1541093376, 226492416, 128),
    ("Qwen3-235B-A22B-Instruct-2507", ABSENT, 235093634560, 7804092416, 1775042560, 128),
    ("Mistral-Nemo-Instruct-2407", ABSENT, 12247782400, 12247782400, 0, 0),
    ("gemma-2-2b-it", ABSENT, 2614341888, 2614341888, 0, 0),
    ("gemma-3-1b-it", ABSENT, 999885952, 999885952, 0, 0),
    ("gemma-3-27b-pt", ABSENT, 27009002240, 27009002240, 0, 0),
    ("TinyLlama-1.1B-Chat-v1.0", ABSENT, 1100048384, 1100048384, 0, 0),
    ("Mixtral-8x7B-Instruct-v0.1", ABSENT, 46702792704, 1605636096, 5637144576, 8),
    ("Mixtral-8x22B-v0.1", ABSENT, 140620634112, 5631877120, 16873592832, 8),
    ("Phi-3-mini-128k-instruct", ABSENT, 3821079552, 3821079552, 0, 0),
    ("Phi-3-mini-4k-instruct", ABSENT, 3821079552, 3821079552, 0, 0),
    ("Phi-3-medium-4k-instruct", ABSENT, 13960238080, 13960238080, 0, 0),
    ("Qwen2.5-Coder-7B-Instruct", ABSENT, 7615616512, 7615616512, 0, 0),
    ("Qwen2.5-0.5B-Instruct", ABSENT, 494032768, 494032768, 0, 0),
    ("SmolLM2-135M", ABSENT, 134515008, 134515008, 0, 0),
    ("SmolLM2-1.7B-Instruct", ABSENT, 1711376384, 1711376384, 0, 0),
    ("DeepSeek-R1-Distill-Qwen-1.5B", ABSENT, 1777088000, 1777088000, 0, 0),
    ("Llama-2-7b-chat-hf", ABSENT, 6738415616, 6738415616, 0, 0),
    ("Mistral-7B-Instruct-v0.2", ABSENT, 7241732096, 7241732096, 0, 0),
    ("Meta-Llama-3-70B-Instruct-Q4_K_M", ABSENT, 70553706496, 70553706496, 0, 0),
    ("llama-3-8b-bf16", ABSENT, 8030261248, 8030261248, 0, 0),
    ("bloom-7b1", ABSENT, 7069016064, 7069016064, 0, 0),
    ("bloom-560m", ABSENT, 559214592, 559214592, 0, 0),
    ("gpt2-xl", ABSENT, 1557611200, 1557611200, 0, 0),
    ("flan-t5-xxl", ABSENT, 11135332352, 11135332352, 0, 0),
    ("OLMo-1B-0724-hf", ABSENT, 1176764416, 1176764416, 0, 0),
    ("Yi-1_5-9B-Chat", ABSENT, 8829407232, 8829407232, 0, 0),
    ("falcon-40b-iter3", ABSENT, 41303293952, 41303293952, 0, 0),
    ("Kimi-K2-Instruct", ABSENT, 1026408232448, 14044655616, 7952007168, 384),
    ("DeepSeek-V3", ABSENT, 671026419200, 16542261248, 5111808000, 256),
    ("Llava-v1.6-vision-lora", ABSENT, 7062902784, 7062902784, 0, 0),
    # the same names on tiny random checkpoints: a size far from the count is a context length
    ("Phi-3-mini-4k-instruct", ABSENT, 155968, 155968, 0, 0),
    ("Meta-Llama-3.1-8B-Instruct", ABSENT, 139592, 139592, 0, 0),
    ("Qwen3-30B-A3B", ABSENT, 2435752, 2432680, 768, 4),
    ("Mixtral-8x7B-Instruct-v0.1", ABSENT, 213824, 90944, 30720, 4),
    ("SmolLM2-135M", ABSENT, 120000000, 120000000, 0, 0),
    ("SmolLM2-135M", ABSENT, 1000000000, 1000000000, 0, 0),
    ("Llama-3.2-1B", ABSENT, 125000000, 125000000, 0, 0),
    ("Llama-3.2-1B", ABSENT, 124999999, 124999999, 0, 0),
    # no count (the converter then writes no size label from it)
    ("Phi-3-mini-4k-instruct", ABSENT, 0, 0, 0, 0),
    ("Llama-3.2-1B", ABSENT, 0, 0, 0, 0),
    # our test folders (../shared/testdata/hf and hf-arch), with their files' counts
    ("llama-bf16", ABSENT, 2086144, 2086144, 0, 0),
    ("llama31-bf16", ABSENT, 139592, 139592, 0, 0),
    ("qwen3-bf16", ABSENT, 1218280, 1218280, 0, 0),
    ("qwen3moe-bf16", ABSENT, 2435752, 2432680, 768, 4),
    ("mixtral-bf16", ABSENT, 213824, 90944, 30720, 4),
    ("gemma2-bf16", ABSENT, 119360, 119360, 0, 0),
    ("gemma3-bf16", ABSENT, 123584, 123584, 0, 0),
    ("phi3-bf16", ABSENT, 155968, 155968, 0, 0),
    ("phi3-longrope-bf16", ABSENT, 147792, 147792, 0, 0),
    ("mistral-nemo-bf16", ABSENT, 164160, 164160, 0, 0),
    # names without a size, version or finetune part, and odd ones
    ("my_model", ABSENT, 2086144, 2086144, 0, 0),
    ("gpt2", ABSENT, 124439808, 124439808, 0, 0),
    ("phi-2", ABSENT, 2779683840, 2779683840, 0, 0),
    ("model-F16", ABSENT, 999, 999, 0, 0),
    ("7B-model", ABSENT, 7000000000, 7000000000, 0, 0),
    ("Llama--2---7B-", ABSENT, 7000000000, 7000000000, 0, 0),
    ("a-7B", ABSENT, 7000000000, 7000000000, 0, 0),
    ("v2-chat", ABSENT, 1000, 1000, 0, 0),
    ("Qwen-small-7B", ABSENT, 7000000000, 7000000000, 0, 0),
    ("t5-small", ABSENT, 60506624, 60506624, 0, 0),
    ("Some-Model-1.5b1-x", ABSENT, 1500000000, 1500000000, 0, 0),
    ("UPPER-CASE-Name-4K", ABSENT, 1000, 1000, 0, 0),
    ("model.v2", ABSENT, 1000, 1000, 0, 0),
    ("iter2-model-iter3", ABSENT, 1000, 1000, 0, 0),
    ("Chat-7B", ABSENT, 7000000000, 7000000000, 0, 0),
    ("tiny-8x", ABSENT, 1000, 1000, 0, 0),
    ("Big-1T-Base", ABSENT, 1000000000001, 1000000000001, 0, 0),
    ("x-999999", ABSENT, 999999, 999999, 0, 0),
    ("x", ABSENT, 1000001, 1000001, 0, 0),
    ("x", ABSENT, 999500, 999500, 0, 0),
    ("x", ABSENT, 9950000, 9950000, 0, 0),
    ("x", ABSENT, 10, 10, 0, 0),
    ("x", ABSENT, 2500, 2500, 0, 0),
    ("x", ABSENT, 1000000000, 1000000000, 0, 0),
    ("\u6a21\u578b-7B", ABSENT, 7000000000, 7000000000, 0, 0),
    # _name_or_path: a Hub id wins field by field; the folder fills in what it leaves out
    ("checkpoint", "org/Name-7B", 7000000000, 7000000000, 0, 0),
    ("run-3", "org/Name-7B", 7000000000, 7000000000, 0, 0),
    ("Name-7B-Chat", "org/Name", 7000000000, 7000000000, 0, 0),
    ("llama-bf16", "some-org/tiny-llama-v1.0", 2086144, 2086144, 0, 0),
    ("llama-bf16", "meta-llama/Llama-2-7b-hf", 6738415616, 6738415616, 0, 0),
    ("out", "Qwen/Qwen3-30B-A3B", 2435752, 2432680, 768, 4),
    ("llama-bf16", "TinyLlama-1.1B-Chat-v1.0", 2086144, 2086144, 0, 0),
    ("llama-bf16", "my model 7B", 2086144, 2086144, 0, 0),
    ("llama-bf16", "./local-model-v2", 2086144, 2086144, 0, 0),
    ("llama-bf16", "../sibling-7b", 2086144, 2086144, 0, 0),
    ("llama-bf16", "/Name-7B", 2086144, 2086144, 0, 0),
    ("llama-bf16", "/home/me/models/Name-7B", 2086144, 2086144, 0, 0),
    ("llama-bf16", "org/", 2086144, 2086144, 0, 0),
    ("llama-bf16", "", 2086144, 2086144, 0, 0),
    ("llama-bf16", None, 2086144, 2086144, 0, 0),
    ("llama-bf16", "7", 2086144, 2086144, 0, 0),
    # the folder as the user names it: Python's Path.name, without resolving the path
    ("models/Phi-3-mini-4k-instruct/", ABSENT, 155968, 155968, 0, 0),
    ("models//gemma-2-2b-it/.", ABSENT, 2614341888, 2614341888, 0, 0),
    (".", ABSENT, 2086144, 2086144, 0, 0),
    (".", "org/Name-7B", 2086144, 2086144, 0, 0),
    ("..", ABSENT, 2086144, 2086144, 0, 0),
]


def converter_keys(folder: str, name_or_path, counts: tuple[int, int, int, int]) -> dict:
    """What ModelBase.prepare_metadata writes for this folder (cwd is where it is named from)."""
    model_dir = Path(folder)
    model_dir.mkdir(parents=True, exist_ok=True)
    config = {} if name_or_path is ABSENT else {"_name_or_path": name_or_path}
    (model_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    total, shared, expert, expert_count = counts
    metadata = gguf.Metadata.load(None, model_dir, None, total)
    if metadata.name is None:
        metadata.name = model_dir.name
    if metadata.size_label is None and total > 0:
        metadata.size_label = gguf.size_label(total, shared, expert, expert_count)
    writer = gguf.GGUFWriter(None, "llama")
    metadata.set_gguf_meta_model(writer)
    written = {k: v.value for k, v in writer.kv_data[0].items() if k != "general.architecture"}
    unknown = [k for k in written if k not in KEYS]
    if unknown or list(written) != [k for k in KEYS if k in written]:
        raise SystemExit(f"{folder}: unexpected keys or order {list(written)}")
    return written


def cell(value) -> str:
    return "" if value is ABSENT else json.dumps(value, ensure_ascii=False)


def main() -> None:
    out = sys.stdout
    out.write("\t".join(["folder", "name_or_path", "total", "shared", "expert", "expert_count"]
                        + KEYS) + "\n")
    for folder, name_or_path, *counts in ROWS:
        with tempfile.TemporaryDirectory() as root:
            # a cwd two levels down, so "." and ".." name folders inside the temporary one
            cwd = Path(root) / "parent" / "cwd"
            cwd.mkdir(parents=True)
            os.chdir(cwd)
            written = converter_keys(folder, name_or_path, tuple(counts))
            os.chdir("/")
        row = [cell(folder), cell(name_or_path)] + [str(c) for c in counts]
        row += [cell(written.get(k, ABSENT)) for k in KEYS]
        out.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
