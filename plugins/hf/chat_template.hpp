// The chat template as gguf-py's SpecialVocab finds it in a checkpoint folder: tokenizer_config's
// chat_template, else chat_template.jinja (with additional_chat_templates/*.jinja as named
// templates), else chat_template.json's, and only when tokenizer_config.json is there at all.
// A template that is there but not used is named in a warning, never dropped silently.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/metadata.hpp"

namespace ckplugin::hf {

// Writes tokenizer.chat_template (and, for named templates, tokenizer.chat_template.NAME and
// tokenizer.chat_templates). `tokenizer_config` is tokenizer_config.json when it is a non-empty
// object, else nullptr (the converter then reads no template). Throws ck::Error naming the file
// when a template file is not UTF-8 text, as the converter fails on it.
void add_chat_template(const std::filesystem::path& folder,
                       const nlohmann::ordered_json* tokenizer_config, ck::Context& context,
                       ck::Metadata& metadata);

}  // namespace ckplugin::hf
