#include "tokenizer.hpp"

#include <fstream>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "sentencepiece.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// llama.cpp's token types (llama_token_type).
enum TokenType : std::int32_t {
    normal = 1,
    unknown = 2,
    control = 3,
    user_defined = 4,
    unused = 5,
    byte = 6
};

std::optional<ordered_json> read_json(const fs::path& path) {
    if (!fs::is_regular_file(path)) return std::nullopt;
    std::ifstream in(path);
    try {
        return ordered_json::parse(in);
    } catch (const ordered_json::exception& e) {
        throw ck::Error(std::string("not valid JSON: ") + e.what(), path.string());
    }
}

// Added tokens that llama.cpp's converter treats as control tokens although they are not
// marked special (SpecialVocab's does_token_look_special).
bool looks_special(const std::string& t) {
    auto wrapped = [&t](std::string_view open, std::string_view close) {
        return t.size() >= open.size() + close.size() && t.starts_with(open) && t.ends_with(close);
    };
    return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" ||
           wrapped("<|", "|>") || wrapped("<\xef\xbd\x9c", "\xef\xbd\x9c>") ||
           wrapped("<unused", ">");
}

struct Vocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<std::int32_t> types;
};

TokenType type_of(PieceType t) {
    // The converter asks IsUnknown, IsControl, IsUnused, IsByte; anything else (user-defined
    // pieces included) is normal.
    switch (t) {
        case PieceType::unknown:
            return unknown;
        case PieceType::control:
            return control;
        case PieceType::unused:
            return unused;
        case PieceType::byte:
            return byte;
        default:
            return normal;
    }
}

Vocab sentencepiece_vocab(const fs::path& folder, std::optional<std::uint32_t> vocab_size,
                          const std::optional<ordered_json>& tokenizer_config,
                          ck::Context& context) {
    const std::vector<Piece> pieces = read_sentencepiece_model(folder / "tokenizer.model");
    const std::size_t n = vocab_size ? *vocab_size : pieces.size();
    Vocab v;
    for (std::size_t i = 0; i < n; ++i) v.tokens.push_back("[PAD" + std::to_string(i) + "]");
    v.scores.assign(n, -10000.0f);
    v.types.assign(n, unused);
    if (pieces.size() > n)
        context.warn("tokenizer.model has " + std::to_string(pieces.size()) +
                     " pieces; config.json's vocab_size " + std::to_string(n) +
                     " keeps the first ones, as llama.cpp's converter does");
    for (std::size_t i = 0; i < pieces.size() && i < n; ++i) {
        v.tokens[i] = pieces[i].text;
        v.scores[i] = pieces[i].score;
        v.types[i] = type_of(pieces[i].type);
    }
    if (const auto added = read_json(folder / "added_tokens.json"); added && added->is_object()) {
        for (auto it = added->begin(); it != added->end(); ++it) {
            if (!it->is_number_unsigned() || it->get<std::uint64_t>() >= n) continue;
            const auto id = it->get<std::size_t>();
            v.tokens[id] = it.key();
            v.scores[id] = -1000.0f;
            v.types[id] = user_defined;
        }
    }
    if (tokenizer_config && tokenizer_config->is_object()) {
        const auto decoder = tokenizer_config->find("added_tokens_decoder");
        if (decoder != tokenizer_config->end() && decoder->is_object()) {
            for (auto it = decoder->begin(); it != decoder->end(); ++it) {
                std::size_t id = 0;
                try {
                    id = std::stoul(it.key());
                } catch (const std::exception&) {
                    throw ck::Error("added_tokens_decoder key '" + it.key() + "' is not a token id",
                                    (folder / "tokenizer_config.json").string());
                }
                if (id >= n || !it->is_object() || !it->contains("content") ||
                    !(*it)["content"].is_string())
                    continue;
                std::string token = (*it)["content"].get<std::string>();
                const bool special = it->value("special", false);
                if (special || looks_special(token)) {
                    v.types[id] = control;
                } else {
                    // The converter pre-normalizes user-defined spaces: U+2581 -> ' '.
                    for (std::size_t at; (at = token.find("\xe2\x96\x81")) != std::string::npos;)
                        token.replace(at, 3, " ");
                    v.types[id] = user_defined;
                }
                v.scores[id] = -1000.0f;
                v.tokens[id] = token;
            }
        }
    }
    return v;
}

// gguf-py's SpecialVocab without merges: ids from tokenizer_config.json's <type>_token (looked
// up in tokenizer.json's added tokens) then config.json's <type>_token_id, add_<type>_token,
// and the chat template.
void add_special_vocab(const fs::path& folder, std::size_t n_vocab,
                       const std::optional<ordered_json>& tokenizer_config,
                       const ordered_json& config, ck::Metadata& metadata) {
    static const char* const types[] = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    std::vector<std::pair<std::string, std::uint32_t>> ids;
    std::vector<std::pair<std::string, bool>> adds;
    auto set_id = [&ids, n_vocab](const std::string& type, const ordered_json& id) {
        if (!id.is_number_integer() || id.is_boolean()) return;
        if (id.get<std::int64_t>() < 0 || id.get<std::uint64_t>() >= n_vocab) return;
        for (const auto& known : ids)
            if (known.first == type) return;
        ids.emplace_back(type, id.get<std::uint32_t>());
    };
    const std::optional<ordered_json> tokenizer_json = read_json(folder / "tokenizer.json");
    const ordered_json added = tokenizer_json && tokenizer_json->contains("added_tokens")
                                   ? (*tokenizer_json)["added_tokens"]
                                   : ordered_json::array();
    if (tokenizer_config && tokenizer_config->is_object()) {
        const ordered_json& tc = *tokenizer_config;
        for (const char* type : types) {
            const std::string t(type);
            if (const auto add = tc.find("add_" + t + "_token");
                add != tc.end() && add->is_boolean())
                adds.emplace_back(t, add->get<bool>());
            const auto entry = tc.find(t + "_token");
            if (entry == tc.end()) continue;
            std::string content;
            if (entry->is_string())
                content = entry->get<std::string>();
            else if (entry->is_object() && entry->contains("content") &&
                     (*entry)["content"].is_string())
                content = (*entry)["content"].get<std::string>();
            else
                continue;
            if (!added.is_array()) continue;
            for (const auto& token : added)
                if (token.is_object() && token.value("content", "") == content &&
                    token.contains("id")) {
                    set_id(t, token["id"]);
                    break;
                }
        }
    }
    if (config.is_object())
        for (const char* type : types)
            if (const auto id = config.find(std::string(type) + "_token_id"); id != config.end())
                set_id(type, *id);
    for (const auto& [type, id] : ids)
        metadata.set("tokenizer.ggml." + type + "_token_id", ck::Value::of_u32(id));
    for (const auto& [type, add] : adds)
        metadata.set("tokenizer.ggml.add_" + type + "_token", ck::Value::of_bool(add));
    if (tokenizer_config && tokenizer_config->is_object())
        if (const auto tmpl = tokenizer_config->find("chat_template");
            tmpl != tokenizer_config->end() && tmpl->is_string())
            metadata.set("tokenizer.chat_template", ck::Value::of_string(tmpl->get<std::string>()));
}

}  // namespace

void add_tokenizer(const fs::path& folder, std::optional<std::uint32_t> vocab_size,
                   const ordered_json& config, ck::Context& context, ck::Metadata& metadata) {
    if (!fs::is_regular_file(folder / "tokenizer.model")) {
        if (fs::is_regular_file(folder / "tokenizer.json"))
            throw ck::Error(
                "only a SentencePiece tokenizer.model is supported; this checkpoint has "
                "tokenizer.json alone (BPE vocabularies are not converted yet)",
                (folder / "tokenizer.json").string());
        throw ck::Error("no tokenizer.model in the checkpoint folder", folder.string());
    }
    const std::optional<ordered_json> tokenizer_config =
        read_json(folder / "tokenizer_config.json");
    const Vocab v = sentencepiece_vocab(folder, vocab_size, tokenizer_config, context);
    metadata.set("tokenizer.ggml.model", ck::Value::of_string("llama"));
    metadata.set("tokenizer.ggml.pre", ck::Value::of_string("default"));
    metadata.set("tokenizer.ggml.tokens",
                 ck::Value::of_array(ck::ArrayValue::of_strings(v.tokens)));
    metadata.set("tokenizer.ggml.scores",
                 ck::Value::of_array(ck::ArrayValue::of<float>(ck::ValueType::f32, v.scores)));
    metadata.set("tokenizer.ggml.token_type", ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(
                                                  ck::ValueType::i32, v.types)));
    add_special_vocab(folder, v.tokens.size(), tokenizer_config, config, metadata);
}

}  // namespace ckplugin::hf
