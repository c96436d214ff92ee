// The YAML front matter of a checkpoint's model card (README.md), read as llama.cpp's converter
// reads it (gguf-py's Metadata.load_model_card with PyYAML's safe_load): the lines between a
// first line "---" and the next "---", YAML 1.1 plain scalars typed as PyYAML types them
// ("yes" is a boolean, "1.0" a number, "2024-01-01" a date).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ckplugin::hf {

struct CardEntry;

// One YAML value with the Python type PyYAML gives it.
struct CardValue {
    enum class Kind { null, boolean, integer, real, text, other, list, map };
    Kind kind = Kind::null;
    std::string text;     // a scalar's text (a string's value); empty for a list or a map
    bool truthy = false;  // Python's bool() of the value: what gguf-py's `if not val` tests
    std::vector<CardValue> items;  // a list's items
    // A map's entries with text keys. Not std::pair<std::string, CardValue>: a pair of the
    // type being defined is instantiated too early for Clang with libstdc++.
    std::vector<CardEntry> entries;

    static CardValue of_text(std::string value);
    // The entry for `key` in a map; nullptr when there is none (or this is no map).
    const CardValue* find(std::string_view key) const;
    // "a number (1.0)", "a list": for messages about a value of the wrong type.
    std::string describe() const;
};

struct CardEntry {
    std::string key;
    CardValue value;
};

// gguf-py's Metadata fields that a model card, config.json and the folder's name fill, each as
// the value it holds (nullopt for Python's None): a card may give any YAML type where text is
// expected, which is only found out when the keys are written.
struct Authorship {
    using Field = std::optional<CardValue>;
    Field name, author, version, organization, finetune, basename, description, size_label;
    Field license, license_name, license_link;
    Field source_url, source_doi, source_uuid, source_repo_url;
    // Each base model and dataset is a map (name, organization, version, repo_url, ...).
    std::optional<std::vector<CardValue>> base_models, datasets;
    std::optional<std::vector<CardValue>> tags, languages;
};

// apply_metadata_heuristic's model card part: the card's keys fill the fields still unset.
// `total_parameters` is what the base models' and datasets' ids are read with.
void apply_model_card(const CardValue& card, std::int64_t total_parameters, Authorship& authorship);

// The front matter of `folder`/README.md as a map; nullopt when there is no README.md, no front
// matter, or front matter that is not a mapping (the converter then ignores the card too).
// Throws ck::Error naming README.md where the converter fails: a file that is not UTF-8, front
// matter that is not YAML or holds several documents, an alias to no anchor, a merge key.
std::optional<CardValue> read_model_card(const std::filesystem::path& folder);

}  // namespace ckplugin::hf
