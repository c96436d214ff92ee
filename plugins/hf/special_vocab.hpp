// What gguf-py's SpecialVocab adds after the vocabulary: BPE merges, special token ids,
// add_bos/add_eos/add_sep and the chat template, read from tokenizer.json,
// tokenizer_config.json and config.json the way llama.cpp's converter reads them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/metadata.hpp"

namespace ckplugin::hf {

// The tokenizer files of a checkpoint folder (each nullopt when absent).
struct TokenizerFiles {
    std::filesystem::path folder;
    std::optional<nlohmann::ordered_json> tokenizer_json;    // tokenizer.json
    std::optional<nlohmann::ordered_json> tokenizer_config;  // tokenizer_config.json
    const nlohmann::ordered_json* config = nullptr;          // config.json
};

// A JSON file of the folder, or nullopt when there is none; throws ck::Error when it is not JSON.
std::optional<nlohmann::ordered_json> read_json_file(const std::filesystem::path& path);

// Added tokens the converter makes control tokens although they are not marked special
// (does_token_look_special): "<|...|>", "<pad>", "<mask>", "<unused...>", ...
bool looks_special(const std::string& token);

// Appends merges (with `merges`), special ids, add_* flags and the chat template.
void add_special_vocab(TokenizerFiles files, std::size_t n_vocab, bool merges, ck::Context& context,
                       ck::Metadata& metadata);

}  // namespace ckplugin::hf
