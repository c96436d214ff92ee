#include "tokenizer.hpp"

#include <fstream>
#include <string>
#include <vector>

#include "bpe_vocab.hpp"
#include "ck/error.hpp"
#include "sentencepiece.hpp"
#include "special_vocab.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

struct Vocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<std::int32_t> types;
};

std::int32_t type_of(PieceType t) {
    // The converter asks IsUnknown, IsControl, IsUnused, IsByte; anything else (user-defined
    // pieces included) is normal.
    const bool kept = t == PieceType::unknown || t == PieceType::control ||
                      t == PieceType::unused || t == PieceType::byte;
    return token_type(kept ? t : PieceType::normal);
}

Vocab sentencepiece_vocab(const fs::path& folder, std::optional<std::uint32_t> vocab_size,
                          const std::optional<ordered_json>& tokenizer_config,
                          ck::Context& context) {
    const std::vector<Piece> pieces = read_sentencepiece_model(folder / "tokenizer.model");
    const std::size_t n = vocab_size ? *vocab_size : pieces.size();
    Vocab v;
    for (std::size_t i = 0; i < n; ++i) v.tokens.push_back("[PAD" + std::to_string(i) + "]");
    v.scores.assign(n, -10000.0f);
    v.types.assign(n, token_type(PieceType::unused));
    if (pieces.size() > n)
        context.warn("tokenizer.model has " + std::to_string(pieces.size()) +
                     " pieces; config.json's vocab_size " + std::to_string(n) +
                     " keeps the first ones, as llama.cpp's converter does");
    for (std::size_t i = 0; i < pieces.size() && i < n; ++i) {
        v.tokens[i] = pieces[i].text;
        v.scores[i] = pieces[i].score;
        v.types[i] = type_of(pieces[i].type);
    }
    if (const auto added = read_json_file(folder / "added_tokens.json");
        added && added->is_object()) {
        for (auto it = added->begin(); it != added->end(); ++it) {
            if (!it->is_number_unsigned() || it->get<std::uint64_t>() >= n) continue;
            const auto id = it->get<std::size_t>();
            v.tokens[id] = it.key();
            v.scores[id] = -1000.0f;
            v.types[id] = token_type(PieceType::user_defined);
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
                    v.types[id] = token_type(PieceType::control);
                } else {
                    // The converter pre-normalizes user-defined spaces: U+2581 -> ' '.
                    for (std::size_t at; (at = token.find("\xe2\x96\x81")) != std::string::npos;)
                        token.replace(at, 3, " ");
                    v.types[id] = token_type(PieceType::user_defined);
                }
                v.scores[id] = -1000.0f;
                v.tokens[id] = token;
            }
        }
    }
    return v;
}

}  // namespace

void add_tokenizer(const fs::path& folder, std::optional<std::uint32_t> vocab_size,
                   const ordered_json& config, ck::Context& context, ck::Metadata& metadata) {
    TokenizerFiles files{folder, read_json_file(folder / "tokenizer.json"),
                         read_json_file(folder / "tokenizer_config.json"), &config};
    // The converter tries tokenizer.model first, then tokenizer.json.
    if (fs::is_regular_file(folder / "tokenizer.model")) {
        const Vocab v = sentencepiece_vocab(folder, vocab_size, files.tokenizer_config, context);
        metadata.set("tokenizer.ggml.model", ck::Value::of_string("llama"));
        metadata.set("tokenizer.ggml.pre", ck::Value::of_string("default"));
        metadata.set("tokenizer.ggml.tokens",
                     ck::Value::of_array(ck::ArrayValue::of_strings(v.tokens)));
        metadata.set("tokenizer.ggml.scores",
                     ck::Value::of_array(ck::ArrayValue::of<float>(ck::ValueType::f32, v.scores)));
        metadata.set(
            "tokenizer.ggml.token_type",
            ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(ck::ValueType::i32, v.types)));
        add_special_vocab(std::move(files), v.tokens.size(), false, context, metadata);
        return;
    }
    if (!files.tokenizer_json)
        throw ck::Error("no tokenizer.model or tokenizer.json in the checkpoint folder",
                        folder.string());
    const BpeVocab v = read_bpe_vocab(files, vocab_size);
    metadata.set("tokenizer.ggml.model", ck::Value::of_string("gpt2"));
    metadata.set("tokenizer.ggml.pre", ck::Value::of_string(v.pre));
    metadata.set("tokenizer.ggml.tokens",
                 ck::Value::of_array(ck::ArrayValue::of_strings(v.tokens)));
    metadata.set("tokenizer.ggml.token_type", ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(
                                                  ck::ValueType::i32, v.types)));
    add_special_vocab(std::move(files), v.tokens.size(), true, context, metadata);
}

}  // namespace ckplugin::hf
