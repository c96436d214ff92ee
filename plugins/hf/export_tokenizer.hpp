// The way back to Hugging Face, tokenizer side: the tokenizer files a checkpoint folder ships,
// rebuilt from the GGUF's tokenizer.* metadata. The inverse of tokenizer.cpp: a SentencePiece
// tokenizer.model (from tokens, scores and types) or a BPE tokenizer.json (vocabulary, merges,
// the pre-tokenizer tokenizer.ggml.pre names, added tokens, the post-processor for add_bos /
// add_eos), and tokenizer_config.json with the special tokens and the chat template.
#pragma once

#include <string>
#include <vector>

#include "architectures.hpp"
#include "ck/model.hpp"

namespace ckplugin::hf {

struct ExportedFile {
    std::string name;   // in the checkpoint folder, e.g. "tokenizer.json"
    std::string bytes;  // the file's content
};

// Every tokenizer file, in the order they are written. Throws ck::key_error naming the key
// (tokenizer.ggml.model, tokenizer.ggml.pre, ...) for a tokenizer it cannot rebuild, before
// anything is written.
std::vector<ExportedFile> export_tokenizer(const ck::ModelHeader& header,
                                           const Architecture& architecture);

}  // namespace ckplugin::hf
