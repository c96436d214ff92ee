#include "pre_tokenizer.hpp"

#include <vector>

#include "ck/error.hpp"

using nlohmann::json;

namespace ckplugin::hf {
namespace {

// A member of a JSON object as the tokenizers library reads it: the value when present, else
// the library's default. Never throws, whatever the types: an unexpected value is kept as it
// is and so matches no table entry.
json field_or(const json& object, const char* key, json fallback) {
    const auto it = object.find(key);
    return it == object.end() ? std::move(fallback) : *it;
}

// One pre-tokenizer step reduced to what decides where it splits: Split's pattern, behaviour
// and inversion; ByteLevel's prefix space and its own (GPT-2) regex. trim_offsets only moves
// offsets, so it is left out. A step of another type is kept whole.
json split_relevant(const json& step) {
    const json type = field_or(step, "type", nullptr);
    if (type == "Split")
        return {{"type", "Split"},
                {"pattern", field_or(step, "pattern", nullptr)},
                {"behavior", field_or(step, "behavior", nullptr)},
                {"invert", field_or(step, "invert", false)}};
    if (type == "ByteLevel")
        return {{"type", "ByteLevel"},
                {"add_prefix_space", field_or(step, "add_prefix_space", true)},
                {"use_regex", field_or(step, "use_regex", true)}};
    return step;
}

// The steps of a pre_tokenizer in the order they run, Sequences flattened.
void append_steps(const json& pre, json& steps) {
    if (pre.is_null()) return;
    if (pre.is_object() && field_or(pre, "type", nullptr) == "Sequence") {
        const json list = field_or(pre, "pretokenizers", nullptr);
        if (list.is_array()) {
            for (const json& step : list) append_steps(step, steps);
            return;
        }
    }
    steps.push_back(pre.is_object() ? split_relevant(pre) : pre);
}

json split_regex(const char* regex) {
    return {{"type", "Split"},
            {"pattern", {{"Regex", regex}}},
            {"behavior", "Isolated"},
            {"invert", false}};
}

json byte_level(bool own_regex) {
    return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", own_regex}};
}

struct KnownPreTokenizer {
    const char* name;
    json normalizer;  // null: none
    json steps;       // as append_steps gives them: always an array
};

// Each entry is checked against llama.cpp's converter on the real tokenizer it names
// (tests/data/hf-tokenizers/README.md): the converter's hash of the check text's ids, computed
// with transformers.js, is its table's entry for this name.
const std::vector<KnownPreTokenizer>& known_pre_tokenizers() {
    static const std::vector<KnownPreTokenizer> table = {
        // The steps are built with json::array: a one-element braced list is an array to GCC
        // but a copy of the element to Clang (nlohmann's initializer-list ambiguity).
        // Llama 3, 3.1, 3.2: digits in groups of up to three.
        {"llama-bpe",
         nullptr,
         {split_regex(
              R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
          byte_level(false)}},
        // Qwen1.5, Qwen2, Qwen2.5, Qwen3: single digits, NFC first.
        {"qwen2",
         {{"type", "NFC"}},
         {split_regex(
              R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
          byte_level(false)}},
        // GPT-2: ByteLevel with its built-in regex and nothing else.
        {"gpt-2", nullptr, json::array({byte_level(true)})},
        // Gemma 3's tokenizer.json: spaces become U+2581 before a split at spaces (which then
        // finds none); the converter's name is that of IBM's granite-embedding-311m-multilingual
        // -r2, which uses this tokenizer.
        {"granite-embed-multi-311m",
         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xe2\x96\x81"}},
         json::array({json{{"type", "Split"},
                           {"pattern", {{"String", " "}}},
                           {"behavior", "MergedWithPrevious"},
                           {"invert", false}}})},
    };
    return table;
}

std::string shortened(const json& value) {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    return text.size() > 300 ? text.substr(0, 300) + "..." : text;
}

}  // namespace

std::string pre_tokenizer_name(const json& tokenizer, const std::string& file) {
    const json normalizer = field_or(tokenizer, "normalizer", nullptr);
    const json pre = field_or(tokenizer, "pre_tokenizer", nullptr);
    json steps = json::array();
    append_steps(pre, steps);
    std::string names;
    for (const KnownPreTokenizer& known : known_pre_tokenizers()) {
        if (known.normalizer == normalizer && known.steps == steps) return known.name;
        names += std::string(names.empty() ? "" : ", ") + known.name;
    }
    throw ck::Error("unknown pre-tokenizer: normalizer " + shortened(normalizer) +
                        ", pre_tokenizer " + shortened(pre) + "; known: " + names +
                        " (docs/formats/hf.md); llama.cpp would need its name, which ckhost "
                        "does not guess",
                    file, std::nullopt, "pre_tokenizer");
}

std::optional<KnownPreTokenizerConfig> known_pre_tokenizer(std::string_view name) {
    for (const KnownPreTokenizer& known : known_pre_tokenizers())
        if (name == known.name) return KnownPreTokenizerConfig{known.normalizer, known.steps};
    return std::nullopt;
}

}  // namespace ckplugin::hf
