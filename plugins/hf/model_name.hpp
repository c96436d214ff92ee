// The general.* keys llama.cpp's converter writes about a checkpoint (gguf-py's Metadata.load
// without an override file): the model card's front matter first, then the model id, which is
// config.json's `_name_or_path` when it is a Hugging Face id, the folder's name filling in what
// that leaves out; each id splits at '-' into basename, size label, finetune and version parts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ck/metadata.hpp"

namespace ckplugin::hf {

// The element counts gguf-py's get_total_parameter_count gives for the tensors written:
// `expert` is the elements of ONE expert (expert tensors' elements / expert_count).
struct ParameterCount {
    std::uint64_t total = 0;
    std::uint64_t shared = 0;
    std::uint64_t expert = 0;
    std::uint32_t expert_count = 0;
    // A LoRA adapter's count: gguf-py negates it ("likely not exact"), which changes how a
    // model id's parts are read (model_id_parts) and leaves the size label out.
    bool adapter = false;

    std::int64_t gguf_total() const {
        return adapter ? -static_cast<std::int64_t>(total) : static_cast<std::int64_t>(total);
    }
};

// Writes the general.* keys gguf-py's Metadata derives for a checkpoint folder, in the order
// set_gguf_meta_model writes them, never an empty one: from the model card's front matter
// (README.md: name, author, license, base models, datasets, tags, languages, ...), then
// config.json's `_name_or_path`, then the folder's name (general.name, version, organization,
// finetune, basename, size_label), the size label from `count` when none gave one. `folder` is
// the path as the user gave it: its last component, as Python's Path.name reads it, is the
// fallback model id. Called right after general.type. Throws ck::Error naming README.md where
// the converter fails on the card (not UTF-8, not YAML, a value that is not text for a text key).
void add_general_naming(const nlohmann::ordered_json& config, const std::filesystem::path& folder,
                        const ParameterCount& count, ck::Metadata& metadata);

// What gguf-py's get_model_id_components finds in a model id ("org/Name-7B-Instruct-v1.0").
// An absent part is nullopt; a present one may be empty ("org/" has an empty name).
struct ModelIdParts {
    std::optional<std::string> name;  // the id after "org/", as written (not title-cased)
    std::optional<std::string> organization;
    std::optional<std::string> basename;
    std::optional<std::string> finetune;
    std::optional<std::string> version;
    std::optional<std::string> size_label;
};

// `total_parameters` decides whether a size in the name is the model's ("7B" for 7.2e9
// parameters) or a context length ("4k" for 1.5e5: then part of the finetune); 0 keeps every
// size; a negative count is an adapter's (ParameterCount::gguf_total), whose "lora" part is no
// finetune. ASCII rules: non-ASCII characters count as letters that have no case.
ModelIdParts model_id_parts(std::string_view model_id, std::int64_t total_parameters);

// gguf-py's Metadata.id_to_title, for a model id's name and organization: "llama-bf16" ->
// "Llama Bf16": '-' becomes a space; an all-lowercase word is title-cased (Python's str.title,
// ASCII letters) unless it is a version ("v1.0") or starts with a digit.
std::string id_to_title(std::string_view id);

// 2086144 -> "2.1M", 1100048384 -> "1.1B": gguf-py's model_weight_count_rounded_notation with
// two significant digits at least.
std::string size_label(std::uint64_t parameters);

}  // namespace ckplugin::hf
