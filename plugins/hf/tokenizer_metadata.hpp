// The tokenizer.* keys of a GGUF model as the hf writer reads them (export_tokenizer.cpp): each
// checked for its type, the arrays for their lengths and the ids for their range, so that a
// malformed key is a ck::key_error naming it before any file is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ck/metadata.hpp"

namespace ckplugin::hf {

// A special token id, by the type name gguf-py's SpecialVocab uses ("bos", "eos", "unk", "sep",
// "pad", "mask", "eot", "eom"), in the GGUF's key order.
struct SpecialTokenId {
    std::string type;
    std::uint32_t id = 0;
};

// tokenizer.ggml.add_<type>_token, in the GGUF's key order.
struct AddTokenFlag {
    std::string type;
    bool value = false;
};

// tokenizer.chat_template.NAME
struct NamedChatTemplate {
    std::string name;
    std::string text;
};

// The token and merge texts are views of the metadata's arrays (a 150k vocabulary is not copied
// once more): a GgufTokenizer lives no longer than the metadata it was read from.
struct GgufTokenizer {
    std::string model;  // tokenizer.ggml.model
    std::string pre;    // tokenizer.ggml.pre, "" when absent
    std::vector<std::string_view> tokens;
    std::vector<float> scores;  // the SentencePiece model's; empty for gpt2
    std::vector<std::int32_t> types;
    std::vector<std::string_view> merges;  // "a b", gpt2 only
    std::vector<SpecialTokenId> special_ids;
    std::vector<AddTokenFlag> add_flags;
    std::optional<bool> add_space_prefix;
    std::optional<std::string> chat_template;
    std::vector<NamedChatTemplate> named_templates;  // in key order
    std::optional<std::uint64_t> context_length;     // <arch>.context_length

    std::optional<std::uint32_t> id_of(std::string_view type) const;
    std::optional<bool> flag(std::string_view type) const;
};

// Reads and checks the keys; throws ck::key_error naming the first malformed one (a required
// key missing, a wrong type, an array of another length than tokenizer.ggml.tokens, a token type
// outside 1..6, an id not below the number of tokens).
GgufTokenizer read_gguf_tokenizer(const ck::Metadata& metadata);

// Whether `token` at `id` is one of the [PADn] entries the converter fills unused ids with
// (UNUSED; for SentencePiece also score -10000).
bool is_converter_pad(const GgufTokenizer& tokenizer, std::size_t id);

// The converter writes a user-defined token's U+2581 as a space (its pre-normalization of
// added tokens); where the original text must have had U+2581, the writer puts it back.
std::string spaces_as_metaspace(std::string text);

}  // namespace ckplugin::hf
