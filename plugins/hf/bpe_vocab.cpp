#include "bpe_vocab.hpp"

#include <unordered_map>

#include "ck/error.hpp"
#include "sentencepiece.hpp"

using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// llama.cpp's converter names the pre-tokenizer by hashing how the Hugging Face tokenizer
// splits a test text, which needs the tokenizers library. We recognise the configuration that
// produces each split instead: the regexes of the Split steps, in order, and whether the
// ByteLevel step splits by its own (GPT-2) regex. An unknown configuration is refused.
struct KnownPreTokenizer {
    const char* name;
    std::vector<std::string> split_regexes;
    bool byte_level_regex;
};

const std::vector<KnownPreTokenizer>& known_pre_tokenizers() {
    static const std::vector<KnownPreTokenizer> table = {
        // Llama 3, 3.1, 3.2: digits in groups of up to three.
        {"llama-bpe",
         {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
         false},
        // Qwen2, Qwen2.5: single digits.
        {"qwen2",
         {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
         false},
        // GPT-2: ByteLevel with its built-in regex and nothing else.
        {"gpt-2", {}, true},
    };
    return table;
}

// The Split regexes and ByteLevel's use_regex of a pre_tokenizer object (a Sequence or one step).
bool describe(const ordered_json& step, std::vector<std::string>& regexes, bool& byte_level_regex) {
    const std::string type = step.value("type", "");
    if (type == "Sequence") {
        if (!step.contains("pretokenizers") || !step["pretokenizers"].is_array()) return false;
        for (const auto& s : step["pretokenizers"])
            if (!describe(s, regexes, byte_level_regex)) return false;
        return true;
    }
    if (type == "Split") {
        const auto pattern = step.find("pattern");
        if (pattern == step.end() || !pattern->is_object() || !pattern->contains("Regex") ||
            !(*pattern)["Regex"].is_string())
            return false;
        regexes.push_back((*pattern)["Regex"].get<std::string>());
        return true;
    }
    if (type == "ByteLevel") {
        byte_level_regex = step.value("use_regex", true);
        return true;
    }
    return false;
}

std::string pre_tokenizer_name(const ordered_json& tokenizer, const std::string& file) {
    const auto pre = tokenizer.find("pre_tokenizer");
    std::vector<std::string> regexes;
    bool byte_level_regex = false;
    if (pre != tokenizer.end() && pre->is_object() && describe(*pre, regexes, byte_level_regex))
        for (const KnownPreTokenizer& k : known_pre_tokenizers())
            if (k.split_regexes == regexes && k.byte_level_regex == byte_level_regex) return k.name;
    std::string text = pre == tokenizer.end() ? "none" : pre->dump();
    if (text.size() > 300) text = text.substr(0, 300) + "...";
    throw ck::Error(
        "unknown pre-tokenizer " + text +
            "; known: llama-bpe, qwen2, gpt-2 (docs/formats/hf.md); llama.cpp would need "
            "its name, which ckhost does not guess",
        file, std::nullopt, "pre_tokenizer");
}

}  // namespace

BpeVocab read_bpe_vocab(const TokenizerFiles& files, std::optional<std::uint32_t> vocab_size) {
    const std::string file = (files.folder / "tokenizer.json").string();
    const ordered_json& tj = *files.tokenizer_json;
    const auto model = tj.find("model");
    if (model == tj.end() || !model->is_object() || model->value("type", "") != "BPE" ||
        !model->contains("vocab") || !(*model)["vocab"].is_object())
        throw ck::Error("tokenizer.json's model is not a BPE vocabulary", file, std::nullopt,
                        "model");
    BpeVocab v;
    v.pre = pre_tokenizer_name(tj, file);

    // Ids of the vocabulary and of the added tokens (the tokenizer's get_vocab()).
    std::unordered_map<std::uint64_t, std::string> by_id;
    std::unordered_map<std::string, const ordered_json*> added;
    const ordered_json& vocab = (*model)["vocab"];
    for (auto it = vocab.begin(); it != vocab.end(); ++it)
        if (it->is_number_unsigned()) by_id[it->get<std::uint64_t>()] = it.key();
    if (tj.contains("added_tokens") && tj["added_tokens"].is_array())
        for (const auto& token : tj["added_tokens"])
            if (token.is_object() && token.contains("id") && token["id"].is_number_unsigned() &&
                token.contains("content") && token["content"].is_string()) {
                by_id[token["id"].get<std::uint64_t>()] = token["content"].get<std::string>();
                added[token["content"].get<std::string>()] = &token;
            }
    std::uint64_t max_id = 0;
    for (const auto& entry : by_id) max_id = std::max(max_id, entry.first);
    const std::uint64_t n = vocab_size ? *vocab_size : by_id.size();
    if (!by_id.empty() && max_id >= n)
        throw ck::Error(
            "token id " + std::to_string(max_id) + " is not below vocab_size " + std::to_string(n),
            file, std::nullopt, "model.vocab");
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto found = by_id.find(i);
        if (found == by_id.end()) {
            v.tokens.push_back("[PAD" + std::to_string(i) + "]");
            v.types.push_back(token_type(PieceType::unused));
            continue;
        }
        std::string token = found->second;
        const auto a = added.find(token);
        if (a == added.end()) {
            v.types.push_back(token_type(PieceType::normal));
        } else if (a->second->value("special", false) || looks_special(token)) {
            v.types.push_back(token_type(PieceType::control));
        } else {
            for (std::size_t at; (at = token.find("\xe2\x96\x81")) != std::string::npos;)
                token.replace(at, 3, " ");
            v.types.push_back(token_type(PieceType::user_defined));
        }
        v.tokens.push_back(std::move(token));
    }
    return v;
}

}  // namespace ckplugin::hf
