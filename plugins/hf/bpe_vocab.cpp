#include "bpe_vocab.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "ck/error.hpp"
#include "pre_tokenizer.hpp"
#include "sentencepiece.hpp"

using nlohmann::json;

namespace ckplugin::hf {
namespace {

// An added token as the converter looks at it (added_tokens_decoder[id]).
struct AddedToken {
    std::string content;
    bool special = false;
};

// The tokenizer's get_vocab() turned around (id -> text: the vocabulary, then the added tokens
// over it) and its added tokens by id. The texts point into the parsed tokenizer.json (which
// outlives the table), and the ids index a vector: a 150k-token vocabulary costs 8 bytes a
// token here, not two more copies in hash and tree nodes (Qwen3's planning peaked at 87 MiB).
struct TokenTable {
    // get_vocab()'s items in order, (id, text): the last text given an id is its text.
    std::vector<std::pair<std::uint64_t, const std::string*>> texts;
    std::unordered_map<std::uint64_t, AddedToken> added;
    std::uint64_t largest_id = 0;

    std::size_t distinct_texts() const { return texts.size(); }  // len(tokenizer.vocab)
    // Each id's text, for ids below n (> largest_id); nullptr where no text has the id.
    std::vector<const std::string*> by_id(std::uint64_t n) const {
        std::vector<const std::string*> texts_by_id(n, nullptr);
        for (const auto& [id, text] : texts) texts_by_id[id] = text;
        return texts_by_id;
    }
};

TokenTable token_table(const json& vocab, const json& added_tokens) {
    // get_vocab() is a dict from text to id: an added token replaces the vocabulary's id of
    // the same text, and each id keeps the last text given it.
    std::unordered_map<std::string_view, std::pair<std::uint64_t, const std::string*>> over;
    TokenTable table;
    if (added_tokens.is_array())
        for (const json& token : added_tokens) {
            const auto id = token.is_object() ? token.find("id") : token.end();
            const auto content = token.is_object() ? token.find("content") : token.end();
            if (id == token.end() || content == token.end() || !id->is_number_unsigned() ||
                !content->is_string())
                continue;
            const auto special = token.find("special");
            const std::string& text = content->get_ref<const std::string&>();
            over[text] = {id->get<std::uint64_t>(), &text};
            table.added[id->get<std::uint64_t>()] = {
                text, special != token.end() && special->is_boolean() && special->get<bool>()};
        }
    table.texts.reserve(vocab.size() + over.size());
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        if (!it->is_number_unsigned()) continue;
        const auto replaced = over.find(it.key());
        table.texts.emplace_back(
            replaced != over.end() ? replaced->second.first : it->get<std::uint64_t>(), &it.key());
    }
    for (const auto& [text, entry] : over)
        if (const auto in_vocab = vocab.find(std::string(text));
            in_vocab == vocab.end() || !in_vocab->is_number_unsigned())
            table.texts.push_back(entry);
    for (const auto& entry : table.texts)
        table.largest_id = std::max(table.largest_id, entry.first);
    return table;
}

}  // namespace

bool is_sentencepiece_as_bpe(const json& tokenizer) {
    const auto model = tokenizer.find("model");
    const auto decoder = tokenizer.find("decoder");
    if (model == tokenizer.end() || !model->is_object()) return false;
    const auto flag = [&model](const char* key) {
        const auto it = model->find(key);
        return it != model->end() && it->is_boolean() && it->get<bool>();
    };
    return model->find("type") != model->end() && (*model)["type"] == "BPE" &&
           flag("byte_fallback") && decoder != tokenizer.end() && decoder->is_object() &&
           decoder->find("type") != decoder->end() && (*decoder)["type"] == "Sequence";
}

BpeVocab read_bpe_vocab(const TokenizerFiles& files, std::optional<std::uint32_t> vocab_size) {
    const std::string file = (files.folder / "tokenizer.json").string();
    const json& tj = *files.tokenizer_json;
    const auto model = tj.is_object() ? tj.find("model") : tj.end();
    if (model == tj.end() || !model->is_object() || model->find("type") == model->end() ||
        (*model)["type"] != "BPE" || model->find("vocab") == model->end() ||
        !(*model)["vocab"].is_object())
        throw ck::Error("tokenizer.json's model is not a BPE vocabulary", file, std::nullopt,
                        "model");
    BpeVocab v;
    v.pre = pre_tokenizer_name(tj, file);
    const json no_added = json::array();
    const auto added_tokens = tj.find("added_tokens");
    const TokenTable table =
        token_table((*model)["vocab"], added_tokens == tj.end() ? no_added : *added_tokens);
    v.listed_tokens =
        (*model)["vocab"].size() +
        (added_tokens != tj.end() && added_tokens->is_array() ? added_tokens->size() : 0);
    const std::uint64_t n = vocab_size ? *vocab_size : table.distinct_texts();
    if (!table.texts.empty() && table.largest_id >= n)
        throw ck::Error("token id " + std::to_string(table.largest_id) +
                            " is not below vocab_size " + std::to_string(n),
                        file, std::nullopt, "model.vocab");
    const std::vector<const std::string*> by_id = table.by_id(n);
    for (std::uint64_t i = 0; i < n; ++i) {
        if (!by_id[i]) {
            v.tokens.push_back("[PAD" + std::to_string(i) + "]");
            v.types.push_back(token_type(PieceType::unused));
            continue;
        }
        std::string token(*by_id[i]);
        const auto added = table.added.find(i);
        v.types.push_back(added == table.added.end() || added->second.content != token
                              ? token_type(PieceType::normal)
                              : added_token_type(added->second.special, token));
        v.tokens.push_back(std::move(token));
    }
    return v;
}

}  // namespace ckplugin::hf
