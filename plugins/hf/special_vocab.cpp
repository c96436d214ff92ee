#include "special_vocab.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include "chat_template.hpp"
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

// The tokens named in tokenizer_config.json as the post-processor is read: bos/eos/cls/sep
// texts, nullopt where the config names none.
struct SpecialTokenTexts {
    std::optional<std::string> bos, eos, cls, sep;
};

// gguf-py's SpecialVocab while it reads the files, one method per file in the converter's
// order: each later file only adds what the earlier ones left (ids keep their first value) or
// overrides a flag, so the steps share this state rather than return values.
class SpecialVocabBuilder {
  public:
    SpecialVocabBuilder(const TokenizerFiles& files, std::size_t n_vocab)
        : n_vocab_(n_vocab),
          tc_(files.tokenizer_config && files.tokenizer_config->is_object()
                  ? *files.tokenizer_config
                  : ordered_json::object()),
          have_tc_(!tc_.empty()) {}

    // tokenizer.json: the merges, the added tokens, and what its post-processor says about
    // bos/eos (it may rewrite the config's eos, as the converter does).
    void read_tokenizer_json(const ordered_json& tj, bool load_merges, const fs::path& file,
                             ck::Context& context) {
        if (load_merges) merges_ = merges_of(tj, file);
        if (tj.contains("added_tokens") && tj["added_tokens"].is_array())
            added_ = tj["added_tokens"];
        SpecialTokenTexts texts = special_texts();
        const auto post = tj.find("post_processor");
        if (post != tj.end() && post->is_object()) read_post_processor(*post, texts);
        if (!have_tc_)
            context.note(
                "tokenizer.json without tokenizer_config.json: no special token ids from it");
    }

    // tokenizer_config.json: add_<type>_token flags, and <type>_token texts looked up among
    // the added tokens for their ids.
    void read_tokenizer_config() {
        if (!have_tc_) return;
        for (const std::string& type : types_) {
            if (const auto add = tc_.find("add_" + type + "_token");
                add != tc_.end() && add->is_boolean())
                put(adds_, type, add->get<bool>());
            if (const auto content = token_content(type)) set_id_of_added(type, *content);
        }
    }

    // config.json: <type>_token_id, where the tokenizer files gave none.
    void read_config(const ordered_json& config) {
        for (const std::string& type : types_)
            if (const auto id = config.find(type + "_token_id"); id != config.end())
                set_id(type, *id);
    }

    void write(ck::Metadata& metadata) const {
        if (!merges_.empty())
            metadata.set("tokenizer.ggml.merges",
                         ck::Value::of_array(ck::ArrayValue::of_strings(merges_)));
        for (const auto& [type, id] : ids_)
            if (const SpecialType* t = find_type(type))
                metadata.set(t->id_key, ck::Value::of_u32(id));
        for (const auto& [type, add] : adds_)
            if (const SpecialType* t = find_type(type); t && t->has_add_key)
                metadata.set("tokenizer.ggml.add_" + type + "_token", ck::Value::of_bool(add));
    }

  private:
    // The config's bos/eos texts, falling back to cls/sep (written back into the config, as
    // the converter does, so the id lookup later finds them).
    SpecialTokenTexts special_texts() {
        SpecialTokenTexts texts{text_of(tc_, "bos_token"), text_of(tc_, "eos_token"),
                                text_of(tc_, "cls_token"), text_of(tc_, "sep_token")};
        if (!texts.bos && texts.cls && have_tc_) tc_["bos_token"] = *(texts.bos = texts.cls);
        if (!texts.eos && texts.sep && have_tc_) tc_["eos_token"] = *(texts.eos = texts.sep);
        return texts;
    }

    void read_post_processor(const ordered_json& post, SpecialTokenTexts& texts) {
        const ordered_json processors =
            post.contains("processors") ? post["processors"] : ordered_json::array({post});
        for (const auto& p : processors) {
            const std::string kind = p.value("type", "");
            if (kind == "RobertaProcessing") {
                put(adds_, "bos", true);
                put(adds_, "eos", true);
                put(adds_, "sep", true);
            } else if (kind == "TemplateProcessing" && p.contains("single") &&
                       p["single"].is_array() && p["single"].size() >= 2) {
                read_single_template(p["single"], texts);
            }
        }
    }

    // The template for one sequence: a special token first means bos is added, one last means
    // eos is; without a config those tokens are bos and eos.
    void read_single_template(const ordered_json& single, SpecialTokenTexts& texts) {
        if (const auto first = special_token_id(single.front())) {
            if (!have_tc_) texts.bos = first;
            put(adds_, "bos", first == texts.bos || first == texts.cls);
        }
        if (const auto last = special_token_id(single.back())) {
            if (!have_tc_)
                texts.eos = last;
            else if (last != texts.eos)
                replace_eos(*last, texts);
            put(adds_, "eos", last == texts.eos);
        }
    }

    // The template ends in another token than the config's eos: that token becomes eos, and
    // the old eos the end-of-turn token (eot, else eom).
    void replace_eos(const std::string& last, SpecialTokenTexts& texts) {
        const char* fallback =
            std::find(types_.begin(), types_.end(), "eot") == types_.end() ? "eot" : "eom";
        types_.emplace_back(fallback);
        if (texts.eos) tc_[std::string(fallback) + "_token"] = *texts.eos;
        tc_["eos_token"] = last;
        texts.eos = last;
    }

    // The text of the config's <type>_token: a string, or an AddedToken object's content.
    std::optional<std::string> token_content(const std::string& type) const {
        const auto entry = tc_.find(type + "_token");
        if (entry == tc_.end()) return std::nullopt;
        if (entry->is_string()) return entry->get<std::string>();
        if (entry->is_object() && entry->contains("content") && (*entry)["content"].is_string())
            return (*entry)["content"].get<std::string>();
        return std::nullopt;
    }

    // The id of the first added token with this text, if it has one.
    void set_id_of_added(const std::string& type, const std::string& content) {
        for (const auto& token : added_)
            if (token.is_object() && token.value("content", "") == content) {
                if (token.contains("id")) set_id(type, token["id"]);
                return;
            }
    }

    // Ids outside the vocabulary are dropped, as the converter drops them; the first id found
    // for a type stays.
    void set_id(const std::string& type, const ordered_json& id) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
            id.get<std::uint64_t>() >= n_vocab_)
            return;
        put(ids_, type, id.get<std::uint32_t>(), true);
    }

    std::size_t n_vocab_;
    ordered_json tc_;  // tokenizer_config.json, as the post-processor rewrites it
    bool have_tc_;     // an empty config counts as none
    std::vector<std::string> types_ = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    std::vector<std::pair<std::string, std::uint32_t>> ids_;
    std::vector<std::pair<std::string, bool>> adds_;
    std::vector<std::string> merges_;
    ordered_json added_ = ordered_json::array();
};

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
    SpecialVocabBuilder vocab(files, n_vocab);
    if (files.tokenizer_json && files.tokenizer_json->is_object())
        vocab.read_tokenizer_json(*files.tokenizer_json, load_merges,
                                  files.folder / "tokenizer.json", context);
    vocab.read_tokenizer_config();
    if (files.config && files.config->is_object()) vocab.read_config(*files.config);
    vocab.write(metadata);
    // The chat template comes last, as gguf-py's add_to_gguf writes it; the converter reads
    // none without a (non-empty) tokenizer_config.json.
    const bool have_config = files.tokenizer_config && files.tokenizer_config->is_object() &&
                             !files.tokenizer_config->empty();
    add_chat_template(files.folder, have_config ? &*files.tokenizer_config : nullptr, context,
                      metadata);
}

}  // namespace ckplugin::hf
