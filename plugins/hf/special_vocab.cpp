#include "special_vocab.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include "ck/error.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// gguf-py's key for each special token type; add_<type>_token exists for bos, eos, sep only
// (the writer has no method for the others, so the converter drops them).
struct SpecialType {
    const char* type;
    const char* id_key;
    bool has_add_key;
};
constexpr SpecialType special_types[] = {
    {"bos", "tokenizer.ggml.bos_token_id", true},
    {"eos", "tokenizer.ggml.eos_token_id", true},
    {"unk", "tokenizer.ggml.unknown_token_id", false},
    {"sep", "tokenizer.ggml.seperator_token_id", true},  // gguf's spelling
    {"pad", "tokenizer.ggml.padding_token_id", false},
    {"cls", "tokenizer.ggml.cls_token_id", false},
    {"mask", "tokenizer.ggml.mask_token_id", false},
    {"eot", "tokenizer.ggml.eot_token_id", false},
    {"eom", "tokenizer.ggml.eom_token_id", false},
};

const SpecialType* find_type(const std::string& type) {
    for (const SpecialType& t : special_types)
        if (type == t.type) return &t;
    return nullptr;
}

// Python's dict: insertion order kept, an update keeps the first position.
template <class V>
void put(std::vector<std::pair<std::string, V>>& list, const std::string& key, V value,
         bool keep_first = false) {
    for (auto& entry : list)
        if (entry.first == key) {
            if (!keep_first) entry.second = value;
            return;
        }
    list.emplace_back(key, value);
}

// A tokenizer_config entry as the converter compares it: a string, or nothing.
std::optional<std::string> text_of(const ordered_json& tc, const std::string& key) {
    const auto it = tc.find(key);
    if (it == tc.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
    return it->get<std::string>();
}

std::optional<std::string> special_token_id(const ordered_json& item) {
    if (!item.is_object()) return std::nullopt;
    const auto special = item.find("SpecialToken");
    if (special == item.end() || !special->is_object()) return std::nullopt;
    const auto id = special->find("id");
    if (id == special->end() || !id->is_string() || id->get<std::string>().empty())
        return std::nullopt;
    return id->get<std::string>();
}

std::vector<std::string> merges_of(const ordered_json& tokenizer, const fs::path& file) {
    std::vector<std::string> merges;
    const auto model = tokenizer.find("model");
    if (model == tokenizer.end() || !model->is_object() || !model->contains("merges"))
        return merges;
    for (const auto& m : (*model)["merges"]) {
        if (m.is_string()) {
            merges.push_back(m.get<std::string>());
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            // Pairs (transformers 4.45+) are joined with a space; a space inside a part is
            // written as U+0120, as the converter does.
            std::string joined;
            for (int part = 0; part < 2; ++part) {
                if (part) joined += ' ';
                for (char c : m[part].get<std::string>())
                    joined += c == ' ' ? "\xc4\xa0" : std::string(1, c);
            }
            merges.push_back(joined);
        } else {
            throw ck::Error("unknown format of model.merges", file.string());
        }
    }
    return merges;
}

}  // namespace

std::optional<ordered_json> read_json_file(const fs::path& path) {
    if (!fs::is_regular_file(path)) return std::nullopt;
    std::ifstream in(path);
    try {
        return ordered_json::parse(in);
    } catch (const ordered_json::exception& e) {
        throw ck::Error(std::string("not valid JSON: ") + e.what(), path.string());
    }
}

bool looks_special(const std::string& t) {
    auto wrapped = [&t](std::string_view open, std::string_view close) {
        return t.size() >= open.size() + close.size() && t.starts_with(open) && t.ends_with(close);
    };
    return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" ||
           wrapped("<|", "|>") || wrapped("<\xef\xbd\x9c", "\xef\xbd\x9c>") ||
           wrapped("<unused", ">");
}

void add_special_vocab(TokenizerFiles files, std::size_t n_vocab, bool load_merges,
                       ck::Context& context, ck::Metadata& metadata) {
    std::vector<std::string> types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    std::vector<std::pair<std::string, std::uint32_t>> ids;
    std::vector<std::pair<std::string, bool>> adds;
    auto set_id = [&ids, n_vocab](const std::string& type, const ordered_json& id) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
            id.get<std::uint64_t>() >= n_vocab)
            return;
        put(ids, type, id.get<std::uint32_t>(), true);
    };
    std::vector<std::string> merges;
    ordered_json added = ordered_json::array();
    ordered_json tc = files.tokenizer_config && files.tokenizer_config->is_object()
                          ? *files.tokenizer_config
                          : ordered_json::object();
    const bool have_tc = !tc.empty();
    if (files.tokenizer_json && files.tokenizer_json->is_object()) {
        const ordered_json& tj = *files.tokenizer_json;
        if (load_merges) merges = merges_of(tj, files.folder / "tokenizer.json");
        if (tj.contains("added_tokens") && tj["added_tokens"].is_array())
            added = tj["added_tokens"];
        auto special_bos = text_of(tc, "bos_token"), special_eos = text_of(tc, "eos_token");
        auto special_cls = text_of(tc, "cls_token"), special_sep = text_of(tc, "sep_token");
        if (!special_bos && special_cls && have_tc) tc["bos_token"] = *(special_bos = special_cls);
        if (!special_eos && special_sep && have_tc) tc["eos_token"] = *(special_eos = special_sep);
        const auto post = tj.find("post_processor");
        if (post != tj.end() && post->is_object()) {
            const ordered_json processors =
                post->contains("processors") ? (*post)["processors"] : ordered_json::array({*post});
            for (const auto& p : processors) {
                const std::string kind = p.value("type", "");
                if (kind == "RobertaProcessing") {
                    put(adds, "bos", true);
                    put(adds, "eos", true);
                    put(adds, "sep", true);
                    continue;
                }
                if (kind != "TemplateProcessing" || !p.contains("single") ||
                    !p["single"].is_array() || p["single"].size() < 2)
                    continue;
                const ordered_json& single = p["single"];
                if (const auto first = special_token_id(single.front())) {
                    if (!have_tc) special_bos = first;
                    put(adds, "bos", first == special_bos || first == special_cls);
                }
                if (const auto last = special_token_id(single.back())) {
                    if (!have_tc) {
                        special_eos = last;
                    } else if (last != special_eos) {
                        // The old eos becomes the end-of-turn token (eot, else eom).
                        const char* fallback =
                            std::find(types.begin(), types.end(), "eot") == types.end() ? "eot"
                                                                                        : "eom";
                        types.emplace_back(fallback);
                        if (special_eos) tc[std::string(fallback) + "_token"] = *special_eos;
                        tc["eos_token"] = *last;
                        special_eos = last;
                    }
                    put(adds, "eos", last == special_eos);
                }
            }
        }
        if (!have_tc)
            context.note(
                "tokenizer.json without tokenizer_config.json: no special token ids from it");
    }
    if (have_tc) {
        for (const std::string& type : types) {
            if (const auto add = tc.find("add_" + type + "_token");
                add != tc.end() && add->is_boolean())
                put(adds, type, add->get<bool>());
            const auto entry = tc.find(type + "_token");
            if (entry == tc.end()) continue;
            std::string content;
            if (entry->is_string())
                content = entry->get<std::string>();
            else if (entry->is_object() && entry->contains("content") &&
                     (*entry)["content"].is_string())
                content = (*entry)["content"].get<std::string>();
            else
                continue;
            for (const auto& token : added)
                if (token.is_object() && token.value("content", "") == content) {
                    if (token.contains("id")) set_id(type, token["id"]);
                    break;
                }
        }
    }
    if (files.config && files.config->is_object())
        for (const std::string& type : types)
            if (const auto id = files.config->find(type + "_token_id"); id != files.config->end())
                set_id(type, *id);

    if (!merges.empty())
        metadata.set("tokenizer.ggml.merges",
                     ck::Value::of_array(ck::ArrayValue::of_strings(merges)));
    for (const auto& [type, id] : ids)
        if (const SpecialType* t = find_type(type)) metadata.set(t->id_key, ck::Value::of_u32(id));
    for (const auto& [type, add] : adds)
        if (const SpecialType* t = find_type(type); t && t->has_add_key)
            metadata.set("tokenizer.ggml.add_" + type + "_token", ck::Value::of_bool(add));
    if (const auto tmpl = tc.find("chat_template"); tmpl != tc.end() && tmpl->is_string())
        metadata.set("tokenizer.chat_template", ck::Value::of_string(tmpl->get<std::string>()));
}

}  // namespace ckplugin::hf
