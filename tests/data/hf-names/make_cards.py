#!/usr/bin/python3
"""Writes cards/<folder>/README.md (model cards with YAML front matter) and cards.json: the
general.* keys llama.cpp's converter writes for each folder, computed by gguf-py itself.

For each case it writes the folder's README.md (and an empty config.json beside it), runs what
the converter's ModelBase.prepare_metadata runs without overrides (gguf.Metadata.load, the
folder-name fallback for general.name, gguf.size_label from the parameter counts), writes the
result with Metadata.set_gguf_meta_model into a real GGUFWriter and serializes its keys to a
file, as the converter does. A case where gguf-py raises records the exception instead.

    cd tests/data/hf-names
    PYTHONPATH=<llama.cpp>/gguf-py /usr/bin/python3 make_cards.py

cards.json: {"<folder>": {"total": n, "shared": n, "expert": n, "expert_count": n,
"keys": [[key, type, value], ...]} or {..., "error": "<Python exception>"}}, in case order.
Types are gguf-py's names (STRING, UINT32, ARRAY); an ARRAY's value is its list.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

import gguf

HERE = Path(__file__).resolve().parent

FRONT = "---\n"

# (folder, (total, shared, expert, expert_count), README.md text)
CASES = [
    # Qwen3's card: license, its link, the pipeline tag and a base model id.
    ("Qwen3-30B-A3B", (30532122624, 1541093376, 226492416, 128),
     FRONT + "library_name: transformers\nlicense: apache-2.0\n"
     "license_link: https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/LICENSE\n"
     "pipeline_tag: text-generation\nbase_model:\n- Qwen/Qwen3-30B-A3B-Base\n---\n\n"
     "# Qwen3-30B-A3B\n\n## Qwen3 Highlights\n\nText of the card.\n"),
    # Llama 3.1's: languages, tags, gated-access fields (nested maps), a long body.
    ("Meta-Llama-3.1-8B-Instruct", (8030261248, 8030261248, 0, 0),
     FRONT + "language:\n- en\n- de\n- fr\n- it\n- pt\n- hi\n- es\n- th\n"
     "license: llama3.1\nbase_model: meta-llama/Meta-Llama-3.1-8B\npipeline_tag: text-generation\n"
     "tags:\n- facebook\n- meta\n- pytorch\n- llama\n- llama-3\n"
     "extra_gated_prompt: \"### LLAMA 3.1 COMMUNITY LICENSE AGREEMENT\\nLlama 3.1 Version Release Date: July 23, 2024\"\n"
     "extra_gated_fields:\n  First Name: text\n  Last Name: text\n  Date of birth: date_picker\n"
     "  Country: country\n  geo: ip_location\n  ? By clicking Submit below I accept the terms\n  : checkbox\n"
     "extra_gated_button_content: Submit\n---\n\n## Model Information\n\n| a | b |\n|---|---|\n"),
    # The "Norway problem": a list item `no` stays the language code.
    ("nordic-7b", (7000000000, 7000000000, 0, 0),
     FRONT + "language:\n- en\n- no\n- sv\n- da\nlanguages: is\nlicense: mit\n---\nbody\n"),
    # Base models as URLs (a Hub one and another), datasets as ids and a map.
    ("zephyr-7b-beta", (7241732096, 7241732096, 0, 0),
     FRONT + "base_model:\n- https://huggingface.co/mistralai/Mistral-7B-v0.1\n"
     "- https://example.com/models/custom\n- http://huggingface.co/org/name/tree/main\n"
     "datasets:\n- HuggingFaceH4/ultrachat_200k\n- HuggingFaceH4/ultrafeedback_binarized\n"
     "- https://huggingface.co/datasets/stingning\n"
     "- {name: Private Set, organization: Us, version: v2, url: https://us.example}\n"
     "- 42\nlicense: mit\nmodel-index:\n- name: zephyr-7b-beta\n  results: []\n---\n"),
    # llama.cpp's own keys: they win over the folder's name.
    ("some-folder-v3", (1100048384, 1100048384, 0, 0),
     FRONT + "name: Custom Name\nauthor: Jane Doe\nversion: v1.2\norganization: Acme\n"
     "description: A model.\nfinetune: chat\nbasename: custom\nsize_label: 1B\n"
     "url: https://acme.example/model\ndoi: 10.1000/xyz\nuuid: 1234-abcd\n"
     "repo_url: https://github.com/acme/model\n---\n"),
    # The same with "model_": each only where the plain key is absent or null.
    ("another-folder-7B-chat", (7000000000, 7000000000, 0, 0),
     FRONT + "model_name: From Model Name\nname: null\nmodel_author: M. Author\n"
     "model_version: \"2.0\"\nmodel_organization: Org\nmodel_description: Described\n"
     "model_finetune: instruct\nmodel_basename: base\nmodel_size_label: 7B\nmodel_url: https://u\n"
     "model_doi: 10.1/2\nmodel_uuid: u-u\nmodel_repo_url: https://r\n---\n"),
    # TheBloke's cards: model_creator, model_name, model_type.
    ("Mistral-7B-Instruct-v0.2-GGUF", (7241732096, 7241732096, 0, 0),
     FRONT + "base_model: mistralai/Mistral-7B-Instruct-v0.2\ninference: false\nlicense: apache-2.0\n"
     "model_creator: Mistral AI_\nmodel_name: Mistral 7B Instruct v0.2\nmodel_type: mistral\n"
     "pipeline_tag: text-generation\nprompt_template: '<s>[INST] {prompt} [/INST]'\n"
     "quantized_by: TheBloke\ntags:\n- finetuned\n---\n"),
    # Several licenses, joined by ','; a pipeline tag without tags.
    ("dual-licensed-3b", (3000000000, 3000000000, 0, 0),
     FRONT + "license:\n- mit\n- apache-2.0\nlicense_name: custom-license\npipeline_tag: fill-mask\n---\n"),
    # Nulls and empty values: a null base model list still writes a count of 0; an empty or
    # false name blocks the folder's name and writes none.
    ("nulls-1B", (1000000000, 1000000000, 0, 0),
     FRONT + "name: ''\nversion: ~\nbase_model:\ndatasets: []\ntags: []\nlanguage:\n---\n"),
    ("false-name-2B", (2000000000, 2000000000, 0, 0),
     FRONT + "name: no\nauthor: 0\ndescription: 0.0\nlicense: ''\n---\n"),
    # Tabs become two spaces; CRLF line ends; an anchor and an alias; a quoted "yes".
    ("tabs-crlf-anchors", (123456, 123456, 0, 0),
     FRONT.replace("\n", "\r\n") + "tags: &t\r\n\t- one\r\n\t- 'yes'\r\nlanguages: *t\r\n"
     "license: \"apache-2.0\"\r\n---\r\nbody\r\n"),
    # The first line must be exactly "---": no front matter here (a BOM, a space, no line).
    ("bom-card", (1000, 1000, 0, 0), "\ufeff---\nlicense: mit\n---\n"),
    ("spaced-card", (1000, 1000, 0, 0), "--- \nlicense: mit\n---\n"),
    ("plain-card", (1000, 1000, 0, 0), "# Just markdown\n\nlicense: mit\n"),
    ("empty-card", (1000, 1000, 0, 0), ""),
    # Front matter that is not a mapping, or empty: ignored.
    ("list-card", (1000, 1000, 0, 0), FRONT + "- a\n- b\n---\n"),
    ("empty-front-matter", (1000, 1000, 0, 0), FRONT + "---\nlicense: mit\n"),
    # No closing "---": everything after the first line is the YAML.
    ("unclosed-card", (1000, 1000, 0, 0), FRONT + "license: mit\ntags: [x, y]\n"),
    # Base models as maps, and one with a null field.
    ("merged-model-13b", (13000000000, 13000000000, 0, 0),
     FRONT + "base_model:\n- name: First\n  organization: Org A\n  repo_url: https://a\n"
     "- name: null\n  author: Someone\n  description: second\n- org/Third-13B-v2\n"
     "- ./local-base\n- my base model\n---\n"),
    # "dataset" (singular), as text; "base_models" when there is no "base_model".
    ("singular-keys", (1000, 1000, 0, 0),
     FRONT + "dataset: allenai/c4\nbase_models: EleutherAI/pythia-160m-deduped\n"
     "base_model_sources: ignored/because-base_models-is-there\n---\n"),
    # A repeated key: the last value, in the first one's place.
    ("repeated-key", (1000, 1000, 0, 0), FRONT + "license: mit\nlicense: gpl-3.0\n---\n"),
    # Keys that are not text (true, 1, null) are never looked up; a nested flow mapping.
    ("odd-keys", (1000, 1000, 0, 0),
     FRONT + "yes: 1\n1: one\n~: x\n\"license\": mit\ntags: hello\nbase_model: {name: X}\n---\n"),
    # YAML 1.1 scalars that are false (0, off, null, ...): each blocks its key and writes none.
    ("falsy-scalars-3B", (3000000000, 3000000000, 0, 0),
     FRONT + "author: 0b0\nfinetune: 0x0\nbasename: -0.0\nsize_label: off\ndescription: 0:00\n"
     "version: .0\nlicense: ~\nlicense_name: NO\nlicense_link: 0_0\nname: 000\n---\n"),
    # Scalars that look like numbers or dates but are text to YAML 1.1.
    ("text-scalars", (1000, 1000, 0, 0),
     FRONT + "version: 1.0.0\nauthor: 1e5\ndescription: 0o17\nfinetune: 1_000x\n"
     "license: 2024-1-1\nlicense_name: =x\nsize_label: <<x\nbasename: .5e\norganization: 12:75\n"
     "tags: [yes-no, 'on', \"1.0\", 0x, ~x]\n---\n"),
    # The folder the e2e test converts (../shared/testdata/hf/llama-bf16 with this card).
    ("llama-bf16", (2086144, 2086144, 0, 0),
     FRONT + "license: llama2\nlanguage: [en]\ntags: [tiny, test]\nbase_model: meta-llama/Llama-2-7b-hf\n"
     "datasets: [wikitext]\nmodel_name: Tiny Llama Test\n---\n\nA tiny random llama.\n"),
    # What the converter fails on: a text key given a number or a date, mixed list items,
    # invalid YAML, two documents, an alias to no anchor, bytes that are not UTF-8.
    ("error-version-number", (1000, 1000, 0, 0), FRONT + "version: 1.0\n---\n"),
    ("error-date", (1000, 1000, 0, 0), FRONT + "description: 2024-01-01\n---\n"),
    ("error-mixed-tags", (1000, 1000, 0, 0), FRONT + "tags: [a, yes]\n---\n"),
    ("error-license-map", (1000, 1000, 0, 0), FRONT + "license: {a: b}\n---\n"),
    ("error-license-list", (1000, 1000, 0, 0), FRONT + "license: [mit, 3]\n---\n"),
    ("error-base-model-name", (1000, 1000, 0, 0), FRONT + "base_model: [{name: 7}]\n---\n"),
    ("error-bad-yaml", (1000, 1000, 0, 0), FRONT + "tags: [a, b\nlicense: mit\n---\n"),
    ("error-two-documents", (1000, 1000, 0, 0), FRONT + "license: mit\n--- \nlicense: x\n---\n"),
    ("error-undefined-alias", (1000, 1000, 0, 0), FRONT + "license: *nothing\n---\n"),
    ("error-not-utf8", (1000, 1000, 0, 0), b"---\nlicense: caf\xe9\n---\n"),
]


def converter_keys(folder: Path, counts) -> list:
    total, shared, expert, expert_count = counts
    metadata = gguf.Metadata.load(None, folder, None, total)
    if metadata.name is None:
        metadata.name = folder.name
    if metadata.size_label is None and total > 0:
        metadata.size_label = gguf.size_label(total, shared, expert, expert_count)
    with tempfile.TemporaryDirectory() as out:
        writer = gguf.GGUFWriter(Path(out) / "m.gguf", "llama")
        metadata.set_gguf_meta_model(writer)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()  # where a value of the wrong type fails
        writer.close()
        reader = gguf.GGUFReader(Path(out) / "m.gguf")
        keys = []
        for name, field in reader.fields.items():
            if not name.startswith("general.") or name == "general.architecture":
                continue
            vtype = field.types[0]
            value = field.contents()
            keys.append([name, vtype.name, value])
        return keys


def main() -> None:
    cards = HERE / "cards"
    shutil.rmtree(cards, ignore_errors=True)
    results = {}
    for folder_name, counts, text in CASES:
        folder = cards / folder_name
        folder.mkdir(parents=True)
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        (folder / "README.md").write_bytes(data)
        entry = dict(zip(["total", "shared", "expert", "expert_count"], counts))
        with tempfile.TemporaryDirectory() as root:
            # the converter reads the folder named as the user gives it; config.json is empty
            work = Path(root) / folder_name
            shutil.copytree(folder, work)
            (work / "config.json").write_text("{}", encoding="utf-8")
            os.chdir(root)
            try:
                entry["keys"] = converter_keys(Path(folder_name), counts)
            except Exception as e:  # noqa: BLE001 - the converter stops on any of them
                entry["error"] = f"{type(e).__name__}: {e}"
            os.chdir("/")
        results[folder_name] = entry
    with open(HERE / "cards.json", "w", encoding="utf-8") as f:
        json.dump(results, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
