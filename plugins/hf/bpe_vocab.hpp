// A byte-level BPE vocabulary from tokenizer.json (Llama 3, Qwen2, GPT-2 style), as llama.cpp's
// converter makes it (get_vocab_base): tokens by id, padded to vocab_size with [PADn], token
// types from the added tokens, and tokenizer.ggml.pre from the pre-tokenizer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "special_vocab.hpp"

namespace ckplugin::hf {

struct BpeVocab {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types;
    std::string pre;  // tokenizer.ggml.pre
};

// Throws ck::Error for a model that is not BPE, an id beyond vocab_size, and a pre-tokenizer
// not in the table of known ones (docs/formats/hf.md), which is never guessed.
BpeVocab read_bpe_vocab(const TokenizerFiles& files, std::optional<std::uint32_t> vocab_size);

}  // namespace ckplugin::hf
