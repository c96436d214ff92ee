// The tokenizer.* metadata of a checkpoint with a SentencePiece tokenizer.model, as llama.cpp's
// converter writes it (_create_vocab_sentencepiece and gguf-py's SpecialVocab): tokens, scores
// and token types, added tokens, special token ids, add_bos/add_eos and the chat template.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/metadata.hpp"

namespace ckplugin::hf {

// Appends the tokenizer keys to `metadata`. `vocab_size` is config.json's (the arrays are
// padded or cut to it, as the converter does); `config` is config.json itself (its
// <type>_token_id entries). Throws ck::Error when the folder has no tokenizer ckhost can read.
void add_tokenizer(const std::filesystem::path& folder, std::optional<std::uint32_t> vocab_size,
                   const nlohmann::ordered_json& config, ck::Context& context,
                   ck::Metadata& metadata);

}  // namespace ckplugin::hf
