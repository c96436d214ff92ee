// What gguf-py's SpecialVocab adds after the vocabulary: BPE merges, special token ids,
// add_bos/add_eos/add_sep (tokenizer_config.json's flags over what tokenizer.json's
// post_processor says), the chat template and the normalizer's lowercase/strip_accents, read
// from tokenizer.json, tokenizer_config.json and config.json the way llama.cpp's converter
// reads them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/metadata.hpp"

namespace ckplugin::hf {

// The tokenizer files of a checkpoint folder (each nullopt when absent). tokenizer.json is
// held unordered: nothing in it depends on the order of an object's members, and nlohmann's
// ordered object finds a key by a linear search, which makes reading a vocabulary of 150 000
// entries quadratic.
struct TokenizerFiles {
    std::filesystem::path folder;
    std::optional<nlohmann::json> tokenizer_json;            // tokenizer.json
    std::optional<nlohmann::ordered_json> tokenizer_config;  // tokenizer_config.json
    const nlohmann::ordered_json* config = nullptr;          // config.json
};

// gguf-py's key for each special token type it has a writer for (the reader writes them, the
// hf writer reads them back): cls has none (the converter skips it with a warning, although
// llama.cpp reads tokenizer.ggml.cls_token_id), and add_<type>_token exists for bos, eos and
// sep only.
struct SpecialType {
    const char* type;
    const char* id_key;
    bool has_add_key;
};
inline constexpr SpecialType special_types[] = {
    {"bos", "tokenizer.ggml.bos_token_id", true},
    {"eos", "tokenizer.ggml.eos_token_id", true},
    {"unk", "tokenizer.ggml.unknown_token_id", false},
    {"sep", "tokenizer.ggml.seperator_token_id", true},  // gguf's spelling
    {"pad", "tokenizer.ggml.padding_token_id", false},
    {"mask", "tokenizer.ggml.mask_token_id", false},
    {"eot", "tokenizer.ggml.eot_token_id", false},
    {"eom", "tokenizer.ggml.eom_token_id", false},
};

// A JSON file of the folder, or nullopt when there is none; throws ck::Error when it is not JSON.
std::optional<nlohmann::ordered_json> read_json_file(const std::filesystem::path& path);
// The same, unordered (for tokenizer.json).
std::optional<nlohmann::json> read_unordered_json_file(const std::filesystem::path& path);

// Added tokens the converter makes control tokens although they are not marked special
// (does_token_look_special): "<|...|>", "<pad>", "<mask>", "<unused...>", ...
bool looks_special(const std::string& token);

// The token type (llama_token_type) the converter gives an added token over the vocabulary:
// CONTROL when `special` or looks_special, else USER_DEFINED with each U+2581 in `token`
// made a space (its pre-normalization of user-defined tokens). Phi-3's class has its own rule.
std::int32_t added_token_type(bool special, std::string& token);

// Appends merges (with `merges`), special ids, add_* flags, the chat template and the
// normalizer flags. `n_vocab` bounds the special ids (the SentencePiece paths give it; the
// tokenizer.json path does not, as in the converter). Throws ck::Error naming the file for a
// post_processor or normalizer the converter cannot read either, and for a negative special id.
void add_special_vocab(const TokenizerFiles& files, std::optional<std::size_t> n_vocab, bool merges,
                       ck::Context& context, ck::Metadata& metadata);

}  // namespace ckplugin::hf
