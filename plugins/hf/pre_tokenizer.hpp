// tokenizer.ggml.pre of a tokenizer.json: the name llama.cpp gives the way the tokenizer splits
// text before BPE. llama.cpp's converter finds it by encoding a check text with the Hugging Face
// tokenizer and looking up the sha256 of the ids in a table of known tokenizers; that needs the
// tokenizer itself. ckhost recognises the configuration that produces each split instead
// (decision 0051): the normalizer, and the pre-tokenizer's steps with the settings that change
// the split. A configuration not in the table is refused, never guessed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ckplugin::hf {

// The pre-tokenizer name for tokenizer.json `tokenizer`; throws ck::Error naming `file` and the
// unknown configuration (normalizer and pre_tokenizer JSON) when it is not a known one.
std::string pre_tokenizer_name(const nlohmann::json& tokenizer, const std::string& file);

// The table's entry for a name, for the way back (export_tokenizer.cpp writes a tokenizer.json
// this table names `name` again): the normalizer (null: none) and the pre-tokenizer steps in
// the reduced form the table compares (Split: type, pattern, behavior, invert; ByteLevel: type,
// add_prefix_space, use_regex). nullopt for a name not in the table.
struct KnownPreTokenizerConfig {
    nlohmann::json normalizer;
    nlohmann::json steps;
};
std::optional<KnownPreTokenizerConfig> known_pre_tokenizer(std::string_view name);

}  // namespace ckplugin::hf
