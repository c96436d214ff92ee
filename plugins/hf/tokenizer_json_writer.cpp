#include "tokenizer_json_writer.hpp"

#include <array>

#include "ck/error.hpp"
#include "ck/support/json_string.hpp"
#include "pre_tokenizer.hpp"

using nlohmann::json;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// Each family as its real tokenizer.json has it (docs/formats/hf.md, "Writer: tokenizer files").
constexpr std::array<BpeFamily, 4> bpe_families = {{
    {"llama-bpe", "PreTrainedTokenizerFast", true, false, true,
     R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true})",
     R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})",
     R"({"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
         "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
         "ignore_merges": true})"},
    {"qwen2", "Qwen2Tokenizer", false, false, false,
     R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
         "use_regex": false})",
     R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false,
         "use_regex": false})",
     R"({"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
         "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false,
         "ignore_merges": false})"},
    {"gpt-2", "GPT2Tokenizer", true, false, true,
     R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true})",
     R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})",
     R"({"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "",
         "end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false,
         "ignore_merges": false})"},
    {"granite-embed-multi-311m", "GemmaTokenizer", false, true, false, "",
     R"({"type": "Sequence", "decoders": [
         {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
         {"type": "ByteFallback"}, {"type": "Fuse"}]})",
     R"({"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
         "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": true,
         "ignore_merges": false})"},
}};

// The tokenizers library writes each type's fields in its struct's order; the reader's table
// holds them sorted. These are the fields its steps have, in the library's order.
constexpr std::string_view serde_field_order[] = {
    "type",   "pattern",          "content",      "behavior", "invert",
    "String", "add_prefix_space", "trim_offsets", "use_regex"};

ordered_json in_serde_order(const json& value) {
    if (value.is_array()) {
        ordered_json list = ordered_json::array();
        for (const json& item : value) list.push_back(in_serde_order(item));
        return list;
    }
    if (!value.is_object()) return ordered_json(value);
    ordered_json object = ordered_json::object();
    for (std::string_view key : serde_field_order)
        if (const auto it = value.find(std::string(key)); it != value.end())
            object[std::string(key)] = in_serde_order(*it);
    for (auto it = value.begin(); it != value.end(); ++it)
        if (!object.contains(it.key())) object[it.key()] = in_serde_order(*it);
    return object;
}

// The pre-tokenizer from the table's steps: a ByteLevel step gets the family's trim_offsets
// back (the table leaves it out, as it does not move split points).
ordered_json pre_tokenizer_json(const json& steps, const BpeFamily& family) {
    ordered_json list = ordered_json::array();
    for (const json& step : steps) {
        ordered_json full = in_serde_order(step);
        if (step.value("type", "") == "ByteLevel")
            full = {{"type", "ByteLevel"},
                    {"add_prefix_space", full["add_prefix_space"]},
                    {"trim_offsets", family.pre_trim_offsets},
                    {"use_regex", full["use_regex"]}};
        list.push_back(std::move(full));
    }
    if (list.size() == 1) return list.front();
    return {{"type", "Sequence"}, {"pretokenizers", std::move(list)}};
}

// `value` as nlohmann's indent-2 dump, its lines indented for an object member at `depth`.
std::string indented(const ordered_json& value, int depth) {
    const std::string text = value.dump(2, ' ', false);
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        out += c;
        if (c == '\n') out.append(static_cast<std::size_t>(depth) * 2, ' ');
    }
    return out;
}

std::string added_tokens_text(const BpeTokenizerJson& t) {
    ordered_json list = ordered_json::array();
    for (const AddedTokenEntry& a : t.added)
        list.push_back({{"id", a.id},
                        {"content", std::string((*t.texts)[a.id])},
                        {"single_word", false},
                        {"lstrip", false},
                        {"rstrip", false},
                        {"normalized", false},
                        {"special", a.special}});
    return indented(list, 1);
}

void append_vocab(std::string& out, const BpeTokenizerJson& t) {
    if (t.vocab.empty()) {
        out += "{}";
        return;
    }
    out += '{';
    for (std::size_t i = 0; i < t.vocab.size(); ++i) {
        out += i ? ",\n      " : "\n      ";
        ck::support::append_json_string(out, (*t.texts)[t.vocab[i]]);
        out += ": " + std::to_string(t.vocab[i]);
    }
    out += "\n    }";
}

// Each "a b" merge as the ["a", "b"] pair tokenizers 0.20 writes; the space llama.cpp's loader
// splits at (the first one after the first byte) separates the parts.
void append_merges(std::string& out, const std::vector<std::string_view>& merges) {
    if (merges.empty()) {
        out += "[]";
        return;
    }
    out += '[';
    for (std::size_t i = 0; i < merges.size(); ++i) {
        const std::string_view merge = merges[i];
        const std::size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string_view::npos;
        if (space == std::string_view::npos)
            throw ck::key_error("merge " + std::to_string(i) + " ('" + std::string(merge) +
                                    "') has no space between two parts",
                                "tokenizer.ggml.merges");
        out += i ? ",\n      [\n        " : "\n      [\n        ";
        ck::support::append_json_string(out, merge.substr(0, space));
        out += ",\n        ";
        ck::support::append_json_string(out, merge.substr(space + 1));
        out += "\n      ]";
    }
    out += "\n    ]";
}

void append_model(std::string& out, const BpeTokenizerJson& t) {
    ordered_json settings = ordered_json::parse(t.family->model);
    if (t.unk_token) settings["unk_token"] = *t.unk_token;
    out += "{\n";
    for (auto it = settings.begin(); it != settings.end(); ++it) {
        out += "    ";
        ck::support::append_json_string(out, it.key());
        out += ": " + indented(*it, 2) + ",\n";
    }
    out += "    \"vocab\": ";
    append_vocab(out, t);
    out += ",\n    \"merges\": ";
    append_merges(out, *t.merges);
    out += "\n  }";
}

// What the file will take, so that it is built in one buffer of about its size: each token's
// text and id on a line of its own, each merge's two parts on three lines.
std::size_t estimated_size(const BpeTokenizerJson& t) {
    std::size_t size = 1 << 16;
    for (std::uint32_t id : t.vocab) size += (*t.texts)[id].size() + 20;
    for (std::string_view merge : *t.merges) size += merge.size() + 40;
    return size + t.added.size() * 200;
}

}  // namespace

const BpeFamily* find_bpe_family(std::string_view pre) {
    for (const BpeFamily& family : bpe_families)
        if (family.pre == pre) return &family;
    return nullptr;
}

std::string bpe_family_names() {
    std::string names;
    for (const BpeFamily& family : bpe_families)
        names += (names.empty() ? "" : ", ") + std::string(family.pre);
    return names;
}

ordered_json bpe_post_processor(const BpeFamily& family, const ordered_json& template_processing) {
    if (family.post_byte_level.empty()) return template_processing;
    ordered_json byte_level = ordered_json::parse(family.post_byte_level);
    if (template_processing.is_null()) return byte_level;
    return {{"type", "Sequence"}, {"processors", {byte_level, template_processing}}};
}

json bpe_model_and_decoder(const BpeFamily& family) {
    return {{"model", json::parse(family.model)}, {"decoder", json::parse(family.decoder)}};
}

std::string tokenizer_json_text(const BpeTokenizerJson& t) {
    const std::optional<KnownPreTokenizerConfig> known = known_pre_tokenizer(t.family->pre);
    if (!known)
        throw ck::plugin_bug("no pre-tokenizer table entry for " + std::string(t.family->pre));
    const ordered_json normalizer = in_serde_order(known->normalizer);
    const ordered_json pre_tokenizer = pre_tokenizer_json(known->steps, *t.family);
    // What the reader names this configuration must be the name it came from.
    const json check = {{"normalizer", json(normalizer)}, {"pre_tokenizer", json(pre_tokenizer)}};
    if (pre_tokenizer_name(check, "tokenizer.json") != t.family->pre)
        throw ck::plugin_bug("the tokenizer.json written for " + std::string(t.family->pre) +
                             " is not read back as it");
    std::string out;
    out.reserve(estimated_size(t));
    out += "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n";
    out += "  \"added_tokens\": " + added_tokens_text(t) + ",\n";
    out += "  \"normalizer\": " + indented(normalizer, 1) + ",\n";
    out += "  \"pre_tokenizer\": " + indented(pre_tokenizer, 1) + ",\n";
    out += "  \"post_processor\": " + indented(t.post_processor, 1) + ",\n";
    out += "  \"decoder\": " + indented(ordered_json::parse(t.family->decoder), 1) + ",\n";
    out += "  \"model\": ";
    append_model(out, t);
    out += "\n}";
    return out;
}

}  // namespace ckplugin::hf
