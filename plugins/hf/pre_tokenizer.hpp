// tokenizer.ggml.pre of a tokenizer.json: the name llama.cpp gives the way the tokenizer splits
// text before BPE. llama.cpp's converter finds it by encoding a check text with the Hugging Face
// tokenizer and looking up the sha256 of the ids in a table of known tokenizers; that needs the
// tokenizer itself. ckhost recognises the configuration that produces each split instead
// (decision 0051): the normalizer, and the pre-tokenizer's steps with the settings that change
// the split. A configuration not in the table is refused, never guessed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ckplugin::hf {

// The pre-tokenizer name for tokenizer.json `tokenizer`; throws ck::Error naming `file` and the
// unknown configuration (normalizer and pre_tokenizer JSON) when it is not a known one.
std::string pre_tokenizer_name(const nlohmann::json& tokenizer, const std::string& file);

}  // namespace ckplugin::hf
