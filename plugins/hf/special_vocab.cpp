#include "special_vocab.hpp"

#include <algorithm>
#include <deque>
#include <fstream>
#include <limits>
#include <vector>

#include "chat_template.hpp"
#include "ck/error.hpp"
#include "post_processor.hpp"
#include "sentencepiece.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

const SpecialType* find_type(const std::string& type) {
    for (const SpecialType& t : special_types)
        if (type == t.type) return &t;
    return nullptr;
}

// The merges as GGUF strings. A string merge is a view of the parsed tokenizer.json (150k
// merges are not copied once more before they are encoded); pairs are joined.
ck::ArrayValue merges_of(const json& tokenizer, const fs::path& file) {
    const auto model = tokenizer.find("model");
    if (model == tokenizer.end() || !model->is_object()) return {};
    const auto list = model->find("merges");
    if (list == model->end() || !list->is_array() || list->empty()) return {};
    std::vector<std::string_view> merges;
    std::deque<std::string> joined;  // stable addresses for the views
    merges.reserve(list->size());
    for (const auto& m : *list) {
        if (m.is_string()) {
            merges.emplace_back(m.get_ref<const std::string&>());
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            // Pairs (transformers 4.45+) are joined with a space; a space inside a part is
            // written as U+0120, as the converter does.
            std::string& pair = joined.emplace_back();
            for (int part = 0; part < 2; ++part) {
                if (part) pair += ' ';
                for (char c : m[part].get_ref<const std::string&>())
                    pair += c == ' ' ? "\xc4\xa0" : std::string(1, c);
            }
            merges.emplace_back(pair);
        } else {
            throw ck::Error("unknown format of model.merges", file.string());
        }
    }
    return ck::ArrayValue::of_strings(merges);
}

// gguf-py's SpecialVocab while it reads the files, one method per file in the converter's
// order: each later file only adds what the earlier ones left (ids keep their first value) or
// overrides a flag, so the steps share this state rather than return values.
class SpecialVocabBuilder {
  public:
    SpecialVocabBuilder(const TokenizerFiles& files, std::optional<std::size_t> n_vocab,
                        ck::Context& context)
        : n_vocab_(n_vocab), context_(context) {
        if (files.tokenizer_config && files.tokenizer_config->is_object())
            state_.tc = *files.tokenizer_config;
        state_.have_tc = !state_.tc.empty();
    }

    // tokenizer.json: the merges, the normalizer flags, the added tokens, and what its
    // post-processor says about bos/eos/sep (it may rewrite the config's texts).
    void read_tokenizer_json(const json& tj, bool load_merges, const fs::path& file) {
        if (!tj.is_object()) throw ck::Error("tokenizer.json is not a JSON object", file.string());
        if (load_merges) merges_ = merges_of(tj, file);
        if (const auto normalizer = tj.find("normalizer"); normalizer != tj.end())
            read_normalizer(*normalizer, file);
        if (const auto added = tj.find("added_tokens"); added != tj.end() && added->is_array())
            added_ = &*added;
        if (tj.empty()) return;
        const auto post = tj.find("post_processor");
        read_post_processor(post == tj.end() ? json() : *post, state_, file.string());
        if (!state_.have_tc)
            context_.note(
                "tokenizer.json without tokenizer_config.json: no special token ids from it");
    }

    // tokenizer_config.json: add_<type>_token flags, and <type>_token texts looked up among
    // tokenizer.json's added tokens for their ids.
    void read_tokenizer_config(const fs::path& tokenizer_json_file) {
        if (!state_.have_tc) return;
        for (const std::string& type : state_.types) {
            if (const auto add = state_.tc.find("add_" + type + "_token");
                add != state_.tc.end() && add->is_boolean())
                set_add_flag(state_.adds, type, add->get<bool>());
            if (const auto content = token_content(type))
                set_id_of_added(type, *content, tokenizer_json_file);
        }
    }

    // config.json: <type>_token_id (else text_config's), where the tokenizer files gave none.
    void read_config(const ordered_json& config, const fs::path& file) {
        const auto text_config = config.find("text_config");
        for (const std::string& type : state_.types) {
            const auto root = config.find(type + "_token_id");
            const ordered_json* id = root == config.end() ? nullptr : &*root;
            if ((!id || id->is_null()) && text_config != config.end() && text_config->is_object())
                if (const auto inner = text_config->find(type + "_token_id");
                    inner != text_config->end())
                    id = &*inner;
            if (id) set_id(type, *id, file);
        }
    }

    void write_ids_and_flags(ck::Metadata& metadata) const {
        if (merges_.size() > 0) metadata.set("tokenizer.ggml.merges", ck::Value::of_array(merges_));
        for (const auto& [type, id] : ids_)
            if (const SpecialType* t = find_type(type))
                metadata.set(t->id_key, ck::Value::of_u32(id));
        for (const auto& [type, add] : state_.adds)
            if (const SpecialType* t = find_type(type); t && t->has_add_key)
                metadata.set("tokenizer.ggml.add_" + type + "_token", ck::Value::of_bool(add));
    }

    // After the chat template, as gguf-py's add_to_gguf writes them.
    void write_normalizer_flags(ck::Metadata& metadata) const {
        if (lowercase_)
            metadata.set("tokenizer.ggml.normalizer.lowercase", ck::Value::of_bool(*lowercase_));
        if (strip_accents_)
            metadata.set("tokenizer.ggml.normalizer.strip_accents",
                         ck::Value::of_bool(*strip_accents_));
    }

  private:
    // Lowercase and StripAccents steps, or a BertNormalizer's flags, anywhere in a Sequence.
    void read_normalizer(const json& normalizer, const fs::path& file) {
        if (normalizer.is_null() || (normalizer.is_object() && normalizer.empty())) return;
        if (!normalizer.is_object())
            throw ck::Error("the normalizer is not an object", file.string(), std::nullopt,
                            "normalizer");
        const auto type = normalizer.find("type");
        const json kind = type == normalizer.end() ? json() : *type;
        const auto flag = [&normalizer](const char* key, std::optional<bool>& into) {
            if (const auto it = normalizer.find(key); it != normalizer.end())
                into = it->is_null() ? std::nullopt : std::optional<bool>(python_truth(*it));
        };
        if (kind == "Lowercase") lowercase_ = true;
        if (kind == "StripAccents") strip_accents_ = true;
        if (kind == "BertNormalizer") {
            flag("lowercase", lowercase_);
            flag("strip_accents", strip_accents_);
        }
        if (kind == "Sequence")
            if (const auto list = normalizer.find("normalizers");
                list != normalizer.end() && list->is_array())
                for (const json& step : *list) read_normalizer(step, file);
    }

    // The text of the config's <type>_token: a string, or an AddedToken object's content.
    std::optional<std::string> token_content(const std::string& type) const {
        const auto entry = state_.tc.find(type + "_token");
        if (entry == state_.tc.end()) return std::nullopt;
        if (entry->is_string()) return entry->get<std::string>();
        if (entry->is_object() && entry->contains("content") && (*entry)["content"].is_string())
            return (*entry)["content"].get<std::string>();
        return std::nullopt;
    }

    // The id of the first added token with this text, if it has one.
    void set_id_of_added(const std::string& type, const std::string& content,
                         const fs::path& file) {
        if (!added_) return;
        for (const auto& token : *added_) {
            const auto text = token.is_object() ? token.find("content") : token.end();
            if (text == token.end() || *text != content) continue;
            if (const auto id = token.find("id"); id != token.end())
                set_id(type, ordered_json(*id), file);
            return;
        }
    }

    // As gguf-py's _set_special_token: an integer (Python's bool is one) below the vocabulary
    // size, the first one found for a type staying; a negative one stops the converter.
    void set_id(const std::string& type, const ordered_json& id, const fs::path& file) {
        if (!id.is_boolean() && !id.is_number_integer()) return;
        if (id.is_number_integer() && !id.is_number_unsigned() && id.get<std::int64_t>() < 0)
            throw ck::Error("special token id " + id.dump() + " for " + type +
                                " is negative (llama.cpp's converter stops on it too)",
                            file.string(), std::nullopt, type + "_token_id");
        const std::uint64_t value = id.is_boolean() ? id.get<bool>() : id.get<std::uint64_t>();
        if ((n_vocab_ && value >= *n_vocab_) || value > std::numeric_limits<std::uint32_t>::max()) {
            context_.warn("special token " + type + " id " + std::to_string(value) +
                          " is outside the vocabulary: not written, as llama.cpp's converter "
                          "skips it");
            return;
        }
        for (const auto& entry : ids_)
            if (entry.first == type) return;
        ids_.emplace_back(type, static_cast<std::uint32_t>(value));
    }

    std::optional<std::size_t> n_vocab_;
    ck::Context& context_;
    SpecialVocabState state_;
    const json* added_ = nullptr;  // tokenizer.json's added_tokens
    std::vector<std::pair<std::string, std::uint32_t>> ids_;
    ck::ArrayValue merges_;
    std::optional<bool> lowercase_, strip_accents_;
};

// A JSON file as `Json` (ordered or not), or nullopt when there is none.
template <class Json>
std::optional<Json> parse_json_file(const fs::path& path) {
    if (!fs::is_regular_file(path)) return std::nullopt;
    std::ifstream in(path);
    try {
        return Json::parse(in);
    } catch (const typename Json::exception& e) {
        throw ck::Error(std::string("not valid JSON: ") + e.what(), path.string());
    }
}

}  // namespace

std::optional<ordered_json> read_json_file(const fs::path& path) {
    return parse_json_file<ordered_json>(path);
}

std::optional<json> read_unordered_json_file(const fs::path& path) {
    return parse_json_file<json>(path);
}

bool looks_special(const std::string& t) {
    auto wrapped = [&t](std::string_view open, std::string_view close) {
        return t.size() >= open.size() + close.size() && t.starts_with(open) && t.ends_with(close);
    };
    return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" ||
           wrapped("<|", "|>") || wrapped("<\xef\xbd\x9c", "\xef\xbd\x9c>") ||
           wrapped("<unused", ">");
}

std::int32_t added_token_type(bool special, std::string& token) {
    if (special || looks_special(token)) return token_type(PieceType::control);
    for (std::size_t at; (at = token.find("\xe2\x96\x81")) != std::string::npos;)
        token.replace(at, 3, " ");
    return token_type(PieceType::user_defined);
}

void add_special_vocab(const TokenizerFiles& files, std::optional<std::size_t> n_vocab,
                       bool load_merges, ck::Context& context, ck::Metadata& metadata) {
    SpecialVocabBuilder vocab(files, n_vocab, context);
    if (files.tokenizer_json)
        vocab.read_tokenizer_json(*files.tokenizer_json, load_merges,
                                  files.folder / "tokenizer.json");
    vocab.read_tokenizer_config(files.folder / "tokenizer.json");
    if (files.config && files.config->is_object())
        vocab.read_config(*files.config, files.folder / "config.json");
    vocab.write_ids_and_flags(metadata);
    // The chat template comes after the flags, as gguf-py's add_to_gguf writes it; the
    // converter reads none without a (non-empty) tokenizer_config.json.
    const bool have_config = files.tokenizer_config && files.tokenizer_config->is_object() &&
                             !files.tokenizer_config->empty();
    add_chat_template(files.folder, have_config ? &*files.tokenizer_config : nullptr, context,
                      metadata);
    vocab.write_normalizer_flags(metadata);
}

}  // namespace ckplugin::hf
