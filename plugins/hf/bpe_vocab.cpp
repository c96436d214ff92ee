#include "bpe_vocab.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

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
// over it) and its added tokens by id.
struct TokenTable {
    std::map<std::uint64_t, std::string> by_id;
    std::unordered_map<std::uint64_t, AddedToken> added;
    std::size_t distinct_texts = 0;  // len(tokenizer.vocab)
};

TokenTable token_table(const json& vocab, const json& added_tokens) {
    // get_vocab() is a dict from text to id: an added token replaces the vocabulary's id of
    // the same text, and each id keeps the last text given it.
    std::unordered_map<std::string, std::uint64_t> ids;
    for (auto it = vocab.begin(); it != vocab.end(); ++it)
        if (it->is_number_unsigned()) ids[it.key()] = it->get<std::uint64_t>();
    TokenTable table;
    if (added_tokens.is_array())
        for (const json& token : added_tokens) {
            const auto id = token.is_object() ? token.find("id") : token.end();
            const auto content = token.is_object() ? token.find("content") : token.end();
            if (id == token.end() || content == token.end() || !id->is_number_unsigned() ||
                !content->is_string())
                continue;
            const auto special = token.find("special");
            ids[content->get<std::string>()] = id->get<std::uint64_t>();
            table.added[id->get<std::uint64_t>()] = {
                content->get<std::string>(),
                special != token.end() && special->is_boolean() && special->get<bool>()};
        }
    for (const auto& [text, id] : ids) table.by_id[id] = text;
    table.distinct_texts = ids.size();
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
    const std::uint64_t n = vocab_size ? *vocab_size : table.distinct_texts;
    if (!table.by_id.empty() && table.by_id.rbegin()->first >= n)
        throw ck::Error("token id " + std::to_string(table.by_id.rbegin()->first) +
                            " is not below vocab_size " + std::to_string(n),
                        file, std::nullopt, "model.vocab");
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto found = table.by_id.find(i);
        if (found == table.by_id.end()) {
            v.tokens.push_back("[PAD" + std::to_string(i) + "]");
            v.types.push_back(token_type(PieceType::unused));
            continue;
        }
        std::string token = found->second;
        const auto added = table.added.find(i);
        v.types.push_back(added == table.added.end() || added->second.content != token
                              ? token_type(PieceType::normal)
                              : added_token_type(added->second.special, token));
        v.tokens.push_back(std::move(token));
    }
    return v;
}

}  // namespace ckplugin::hf
