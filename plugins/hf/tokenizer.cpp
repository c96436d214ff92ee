#include "tokenizer.hpp"

#include <charconv>
#include <string>
#include <vector>

#include "bpe_vocab.hpp"
#include "ck/error.hpp"
#include "post_processor.hpp"
#include "sentencepiece.hpp"
#include "special_vocab.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
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

// The pieces over vocab_size (else the piece count) [PADn] entries (score -10000, UNUSED).
// Pieces beyond it: the common
// class drops them with a warning; Phi-3's fails on them (an index error), and so do we.
Vocab piece_vocab(const fs::path& model, std::optional<std::uint32_t> vocab_size,
                  TokenizerStyle style, ck::Context& context) {
    const std::vector<Piece> pieces = read_sentencepiece_model(model);
    const std::size_t n = vocab_size ? *vocab_size : pieces.size();
    Vocab v;
    for (std::size_t i = 0; i < n; ++i) v.tokens.push_back("[PAD" + std::to_string(i) + "]");
    v.scores.assign(n, -10000.0f);
    v.types.assign(n, token_type(PieceType::unused));
    if (pieces.size() > n && style == TokenizerStyle::phi3)
        throw ck::Error("tokenizer.model has " + std::to_string(pieces.size()) +
                            " pieces, more than config.json's vocab_size " + std::to_string(n) +
                            " (llama.cpp's Phi-3 converter fails on it too)",
                        model.string());
    if (pieces.size() > n)
        context.warn("tokenizer.model has " + std::to_string(pieces.size()) +
                     " pieces; config.json's vocab_size " + std::to_string(n) +
                     " keeps the first ones, as llama.cpp's converter does");
    for (std::size_t i = 0; i < pieces.size() && i < n; ++i) {
        v.tokens[i] = pieces[i].text;
        v.scores[i] = pieces[i].score;
        v.types[i] = type_of(pieces[i].type);
    }
    return v;
}

// added_tokens.json: text -> id, USER_DEFINED with score -1000; ids beyond the vocabulary
// are skipped (both classes do).
void apply_added_tokens_json(Vocab& v, const fs::path& folder) {
    const auto added = read_json_file(folder / "added_tokens.json");
    if (!added || !added->is_object()) return;
    for (auto it = added->begin(); it != added->end(); ++it) {
        if (!it->is_number_unsigned() || it->get<std::uint64_t>() >= v.tokens.size()) continue;
        const auto id = it->get<std::size_t>();
        v.tokens[id] = it.key();
        v.scores[id] = -1000.0f;
        v.types[id] = token_type(PieceType::user_defined);
    }
}

std::size_t decoder_id(const std::string& key, const fs::path& file) {
    std::size_t id = 0;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (key.empty() || error != std::errc() || end != key.data() + key.size())
        throw ck::Error("added_tokens_decoder key '" + key + "' is not a token id", file.string());
    return id;
}

// One added token over the vocabulary. Common: CONTROL when special or looking special, else
// USER_DEFINED with U+2581 as a space. Phi-3: CONTROL when special, else USER_DEFINED, the
// text as it is.
void set_added(Vocab& v, std::size_t id, std::string token, bool special, TokenizerStyle style) {
    v.types[id] = style == TokenizerStyle::phi3
                      ? token_type(special ? PieceType::control : PieceType::user_defined)
                      : added_token_type(special, token);
    v.scores[id] = -1000.0f;
    v.tokens[id] = std::move(token);
}

[[noreturn]] void phi3_beyond(std::size_t id, std::size_t n, const fs::path& file) {
    throw ck::Error("added token id " + std::to_string(id) + " is not below vocab_size " +
                        std::to_string(n) + " (llama.cpp's Phi-3 converter fails on it too)",
                    file.string());
}

// tokenizer_config.json's added_tokens_decoder: id -> {content, special, ...}.
void apply_added_tokens_decoder(Vocab& v, const ordered_json& tc, TokenizerStyle style,
                                const fs::path& file) {
    const auto decoder = tc.find("added_tokens_decoder");
    if (decoder == tc.end() || !decoder->is_object()) return;
    for (auto it = decoder->begin(); it != decoder->end(); ++it) {
        const std::size_t id = decoder_id(it.key(), file);
        if (!it->is_object() || !it->contains("content") || !(*it)["content"].is_string()) continue;
        if (id >= v.tokens.size()) {
            if (style == TokenizerStyle::phi3) phi3_beyond(id, v.tokens.size(), file);
            continue;
        }
        const auto special = it->find("special");
        set_added(v, id, (*it)["content"].get<std::string>(),
                  special != it->end() && python_truth(*special), style);
    }
}

// Phi-3 reads tokenizer.json's added_tokens over the SentencePiece vocabulary too.
void apply_phi3_tokenizer_json(Vocab& v, const json& tj, const fs::path& file) {
    const auto added = tj.is_object() ? tj.find("added_tokens") : tj.end();
    if (added == tj.end() || !added->is_array()) return;
    for (const json& token : *added) {
        const auto id = token.is_object() ? token.find("id") : token.end();
        const auto content = token.is_object() ? token.find("content") : token.end();
        if (id == token.end() || !id->is_number_unsigned() || content == token.end() ||
            !content->is_string())
            throw ck::Error("an added token without a numeric id and a text: " + token.dump(),
                            file.string(), std::nullopt, "added_tokens");
        if (id->get<std::uint64_t>() >= v.tokens.size())
            phi3_beyond(id->get<std::size_t>(), v.tokens.size(), file);
        const auto special = token.find("special");
        set_added(v, id->get<std::size_t>(), content->get<std::string>(),
                  special != token.end() && python_truth(*special), TokenizerStyle::phi3);
    }
}

std::size_t write_sentencepiece(const TokenizerFiles& files,
                                std::optional<std::uint32_t> vocab_size, TokenizerStyle style,
                                ck::Context& context, ck::Metadata& metadata) {
    Vocab v = piece_vocab(files.folder / "tokenizer.model", vocab_size, style, context);
    apply_added_tokens_json(v, files.folder);
    if (files.tokenizer_config && files.tokenizer_config->is_object())
        apply_added_tokens_decoder(v, *files.tokenizer_config, style,
                                   files.folder / "tokenizer_config.json");
    if (style == TokenizerStyle::phi3 && files.tokenizer_json)
        apply_phi3_tokenizer_json(v, *files.tokenizer_json, files.folder / "tokenizer.json");
    metadata.set("tokenizer.ggml.model", ck::Value::of_string("llama"));
    metadata.set("tokenizer.ggml.pre", ck::Value::of_string("default"));
    metadata.set("tokenizer.ggml.tokens",
                 ck::Value::of_array(ck::ArrayValue::of_strings(v.tokens)));
    metadata.set("tokenizer.ggml.scores",
                 ck::Value::of_array(ck::ArrayValue::of<float>(ck::ValueType::f32, v.scores)));
    metadata.set("tokenizer.ggml.token_type", ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(
                                                  ck::ValueType::i32, v.types)));
    add_special_vocab(files, v.tokens.size(), false, context, metadata);
    return v.tokens.size();
}

// _set_vocab_gpt2: returns the tokens written, or for Gemma 3 what its class counts.
std::size_t write_bpe(const TokenizerFiles& files, std::optional<std::uint32_t> vocab_size,
                      TokenizerStyle style, ck::Context& context, ck::Metadata& metadata) {
    std::size_t written = 0;
    {  // the token list goes before the merges are read: a 150k vocabulary is held once
        const BpeVocab v = read_bpe_vocab(files, vocab_size);
        metadata.set("tokenizer.ggml.model", ck::Value::of_string("gpt2"));
        metadata.set("tokenizer.ggml.pre", ck::Value::of_string(v.pre));
        metadata.set("tokenizer.ggml.tokens",
                     ck::Value::of_array(ck::ArrayValue::of_strings(v.tokens)));
        metadata.set(
            "tokenizer.ggml.token_type",
            ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(ck::ValueType::i32, v.types)));
        written = style == TokenizerStyle::gemma3 ? v.listed_tokens : v.tokens.size();
    }
    add_special_vocab(files, std::nullopt, true, context, metadata);
    return written;
}

// Phi-3's choice: tokenizer_config.json's tokenizer_class (which it requires when the file
// is there) GPT2Tokenizer means the BPE tokenizer.json.
bool phi3_reads_tokenizer_json(const TokenizerFiles& files) {
    if (!files.tokenizer_config) return false;
    const ordered_json& tc = *files.tokenizer_config;
    const auto tokenizer_class = tc.is_object() ? tc.find("tokenizer_class") : tc.end();
    if (tokenizer_class == tc.end())
        throw ck::Error("no tokenizer_class, which llama.cpp's Phi-3 converter requires",
                        (files.folder / "tokenizer_config.json").string(), std::nullopt,
                        "tokenizer_class");
    return *tokenizer_class == "GPT2Tokenizer";
}

// Llama's class writes tokenizer_config.json's add_prefix_space before anything else.
void add_llama_space_prefix(const TokenizerFiles& files, ck::Metadata& metadata) {
    if (!files.tokenizer_config || !files.tokenizer_config->is_object()) return;
    const auto flag = files.tokenizer_config->find("add_prefix_space");
    if (flag != files.tokenizer_config->end() && !flag->is_null())
        metadata.set("tokenizer.ggml.add_space_prefix", ck::Value::of_bool(python_truth(*flag)));
}

[[noreturn]] void no_tokenizer_file(const fs::path& folder, const std::string& what) {
    throw ck::Error(what, folder.string());
}

}  // namespace

std::size_t add_tokenizer(const fs::path& folder, std::optional<std::uint32_t> vocab_size,
                          const ordered_json& config, TokenizerStyle style, ck::Context& context,
                          ck::Metadata& metadata) {
    const TokenizerFiles files{folder, read_unordered_json_file(folder / "tokenizer.json"),
                               read_json_file(folder / "tokenizer_config.json"), &config};
    const bool have_model = fs::is_regular_file(folder / "tokenizer.model");
    if (style == TokenizerStyle::llama) add_llama_space_prefix(files, metadata);
    bool bpe = style == TokenizerStyle::gpt2 || !have_model;
    if (style == TokenizerStyle::phi3) {
        bpe = phi3_reads_tokenizer_json(files);
        if (!bpe && !have_model)
            no_tokenizer_file(folder,
                              "no tokenizer.model, which llama.cpp's Phi-3 converter requires");
    }
    if (style == TokenizerStyle::gemma && !have_model)
        no_tokenizer_file(
            folder,
            "no tokenizer.model, which llama.cpp's Gemma 2 converter requires (it does not "
            "read tokenizer.json)");
    if (!bpe) {
        const std::size_t n = write_sentencepiece(files, vocab_size, style, context, metadata);
        if (style == TokenizerStyle::gemma || style == TokenizerStyle::gemma3)
            metadata.set("tokenizer.ggml.add_space_prefix", ck::Value::of_bool(false));
        return n;
    }
    if (!files.tokenizer_json)
        no_tokenizer_file(folder, "no tokenizer.model or tokenizer.json in the checkpoint folder");
    if (style == TokenizerStyle::llama && is_sentencepiece_as_bpe(*files.tokenizer_json))
        throw ck::Error(
            "tokenizer.json is a SentencePiece model saved as BPE (byte fallback), "
            "which llama.cpp's converter reads with LlamaHfVocab; ckhost does not: "
            "add the checkpoint's tokenizer.model",
            (folder / "tokenizer.json").string());
    return write_bpe(files, vocab_size, style, context, metadata);
}

}  // namespace ckplugin::hf
