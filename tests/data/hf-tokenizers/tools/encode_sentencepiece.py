#!/usr/bin/env python3
"""Encodes texts with a folder's tokenizer.model through Debian's python3-sentencepiece, an
implementation independent of ckhost, for tests/hf/test_hf_export_tokenizer.cpp.

    encode_sentencepiece.py FOLDER TEXTS_JSON [--prefix-space]

TEXTS_JSON: a file with a JSON list of strings. Prints one JSON object:
  "add_dummy_prefix", "normalizer": the model's NormalizerSpec (add_dummy_prefix, name),
  "raw": each text's ids from the model alone,
  "split": each text's ids as transformers' slow tokenizers make them: the folder's added tokens
    (tokenizer_config.json's added_tokens_decoder, added_tokens.json) cut out first, longest
    first, each one its id, the text between them encoded by the model,
  "lossless": whether the model decodes each text's raw ids back to the text (its normalizer
    left the text as it is).
--prefix-space puts a space before each text (and each piece between added tokens) first: a
model without a dummy prefix then encodes as one with it does.
"""
import json
import os
import sys

import sentencepiece


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def fields(data):
    """(field number, value) of a protobuf message: varints as ints, bytes as bytes."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        wire = key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        elif wire == 2:
            length, at = varint(data, at)
            value, at = data[at:at + length], at + length
        else:
            raise ValueError("wire type %d" % wire)
        yield key >> 3, value


def normalizer_spec(model_file):
    """ModelProto field 3, with sentencepiece_model.proto's defaults."""
    spec = {"name": "", "add_dummy_prefix": True}
    with open(model_file, "rb") as f:
        model = f.read()
    for number, value in fields(model):
        if number == 3:
            for inner, inner_value in fields(value):
                if inner == 1:
                    spec["name"] = inner_value.decode("utf-8")
                if inner == 3:
                    spec["add_dummy_prefix"] = bool(inner_value)
    return spec


def added_tokens(folder):
    tokens = {}
    config = os.path.join(folder, "tokenizer_config.json")
    if os.path.exists(config):
        with open(config, encoding="utf-8") as f:
            for key, entry in json.load(f).get("added_tokens_decoder", {}).items():
                tokens[entry["content"]] = int(key)
    extra = os.path.join(folder, "added_tokens.json")
    if os.path.exists(extra):
        with open(extra, encoding="utf-8") as f:
            for content, token_id in json.load(f).items():
                tokens.setdefault(content, token_id)
    return tokens


def split_encode(sp, text, tokens, prefix):
    ordered = sorted(tokens, key=len, reverse=True)
    ids, pending, at = [], "", 0
    while at < len(text):
        match = next((t for t in ordered if t and text.startswith(t, at)), None)
        if match is None:
            pending += text[at]
            at += 1
            continue
        if pending:
            ids += sp.encode(prefix + pending)
            pending = ""
        ids.append(tokens[match])
        at += len(match)
    if pending:
        ids += sp.encode(prefix + pending)
    return ids


def main():
    folder, texts_file = sys.argv[1], sys.argv[2]
    prefix = " " if "--prefix-space" in sys.argv[3:] else ""
    model_file = os.path.join(folder, "tokenizer.model")
    sp = sentencepiece.SentencePieceProcessor(model_file=model_file)
    with open(texts_file, encoding="utf-8") as f:
        texts = json.load(f)
    tokens = added_tokens(folder)
    raw = [sp.encode(prefix + text) for text in texts]
    spec = normalizer_spec(model_file)
    json.dump({"add_dummy_prefix": spec["add_dummy_prefix"], "normalizer": spec["name"],
               "raw": raw,
               "split": [split_encode(sp, text, tokens, prefix) for text in texts],
               "lossless": [sp.decode(ids) == prefix + text
                            if spec["add_dummy_prefix"] or not prefix else False
                            for ids, text in zip(raw, texts)]},
              sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
