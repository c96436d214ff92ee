// A byte-level BPE vocabulary from tokenizer.json (Llama 3, Qwen2/3, GPT-2 style, and Gemma 3's
// tokenizer.json), as llama.cpp's converter makes it (get_vocab_base): tokens by id, padded to
// vocab_size with [PADn], token types from the added tokens, and tokenizer.ggml.pre from the
// normalizer and pre-tokenizer (pre_tokenizer.cpp).
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
    // len(model.vocab) + len(added_tokens) of tokenizer.json: what Gemma 3's converter class
    // cuts token_embd to (it counts an added token that is also in the vocabulary twice).
    std::size_t listed_tokens = 0;
};

// Throws ck::Error for a model that is not BPE, an id not below vocab_size, and a
// pre-tokenizer not in the table of known ones (pre_tokenizer.cpp), which is never guessed.
BpeVocab read_bpe_vocab(const TokenizerFiles& files, std::optional<std::uint32_t> vocab_size);

// Whether tokenizer.json is a SentencePiece model saved as BPE (byte fallback, a Sequence
// decoder): llama.cpp's Llama class reads such a file as a SentencePiece vocabulary
// (LlamaHfVocab), which ckhost does not reproduce.
bool is_sentencepiece_as_bpe(const nlohmann::json& tokenizer);

}  // namespace ckplugin::hf
