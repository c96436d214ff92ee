#include "tokenizer_config_writer.hpp"

#include "ck/error.hpp"
#include "ck/utf8.hpp"

using nlohmann::json;
using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// tokenizer.chat_template as text; with named templates, the list transformers keeps them in,
// which the reader (chat_template.cpp) reads back as the same keys in the same order.
void add_chat_templates(const GgufTokenizer& t, ordered_json& tc) {
    if (t.chat_template)
        require_json_text(*t.chat_template, "tokenizer.chat_template", "the template");
    for (const NamedChatTemplate& named : t.named_templates)
        require_json_text(named.text, "tokenizer.chat_template." + named.name, "the template");
    if (t.named_templates.empty()) {
        if (t.chat_template) tc["chat_template"] = *t.chat_template;
        return;
    }
    ordered_json list = ordered_json::array();
    if (t.chat_template) list.push_back({{"name", "default"}, {"template", *t.chat_template}});
    for (const NamedChatTemplate& named : t.named_templates)
        list.push_back({{"name", named.name}, {"template", named.text}});
    tc["chat_template"] = std::move(list);
}

}  // namespace

void require_json_text(std::string_view text, std::string_view key, const std::string& what) {
    if (const auto at = ck::invalid_utf8_at(text))
        throw ck::key_error(what + " is not valid UTF-8 (at byte " + std::to_string(*at) +
                                "), which a Hugging Face JSON file cannot hold",
                            key);
}

std::string token_label(std::size_t id) {
    return "token " + std::to_string(id);
}

ordered_json special_flags(const GgufTokenizer& t) {
    ordered_json specials = ordered_json::object();
    for (const AddTokenFlag& flag : t.add_flags)
        specials["add_" + flag.type + "_token"] = flag.value;
    for (const char* type : {"bos", "eos", "unk", "pad"})
        specials[std::string(type) + "_token"] = nullptr;
    return specials;
}

std::string tokenizer_config_text(const GgufTokenizer& t, const TokenizerConfigParts& parts,
                                  TokenizerStyle style) {
    ordered_json tc = parts.specials;
    for (auto it = tc.begin(); it != tc.end(); ++it)
        if (it->is_string())
            require_json_text(it->get_ref<const std::string&>(), "tokenizer.ggml.tokens",
                              "the " + it.key() + " text");
    if (style == TokenizerStyle::llama && t.add_space_prefix)
        tc["add_prefix_space"] = *t.add_space_prefix;
    ordered_json decoder = ordered_json::object();
    for (const DecoderEntry& entry : parts.decoder) {
        require_json_text(entry.content, "tokenizer.ggml.tokens", token_label(entry.id));
        decoder[std::to_string(entry.id)] = {
            {"content", entry.content}, {"lstrip", false},      {"normalized", false},
            {"rstrip", false},          {"single_word", false}, {"special", entry.special}};
    }
    tc["added_tokens_decoder"] = std::move(decoder);
    add_chat_templates(t, tc);
    tc["clean_up_tokenization_spaces"] = parts.clean_up_tokenization_spaces;
    if (t.context_length) tc["model_max_length"] = *t.context_length;
    tc["tokenizer_class"] = std::string(parts.tokenizer_class);
    return json::parse(tc.dump()).dump(2, ' ', false) + "\n";
}

}  // namespace ckplugin::hf
