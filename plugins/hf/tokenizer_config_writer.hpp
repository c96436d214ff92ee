// tokenizer_config.json for the hf writer's tokenizer files (export_tokenizer.cpp for
// SentencePiece, export_bpe_tokenizer.cpp for byte-level BPE): added_tokens_decoder, the special
// token texts and add_<type>_token flags, the chat template(s), tokenizer_class,
// clean_up_tokenization_spaces and model_max_length, as transformers' save_pretrained writes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer.hpp"
#include "tokenizer_metadata.hpp"

namespace ckplugin::hf {

// Throws ck::key_error naming `key` when `text` (`what`, e.g. "token 5") is not valid UTF-8:
// GGUF strings are bytes, JSON holds text.
void require_json_text(std::string_view text, std::string_view key, const std::string& what);

// "token 5", for messages.
std::string token_label(std::size_t id);

// An entry of added_tokens_decoder. lstrip, rstrip, single_word and normalized are not in the
// GGUF: false, as the families' own files have them for their special tokens.
struct DecoderEntry {
    std::uint32_t id = 0;
    std::string content;
    bool special = false;
};

struct TokenizerConfigParts {
    std::vector<DecoderEntry> decoder;
    // add_<type>_token flags and <type>_token texts (null where there is none)
    nlohmann::ordered_json specials = nlohmann::ordered_json::object();
    std::string_view tokenizer_class;
    bool clean_up_tokenization_spaces = false;
};

// The GGUF's add_<type>_token flags, and null <type>_token texts for bos, eos, unk and pad
// (the caller fills in those there are).
nlohmann::ordered_json special_flags(const GgufTokenizer& tokenizer);

// The file's text: save_pretrained's form (keys sorted, indent 2, non-ASCII as it is, a final
// newline). Llama's class reads add_prefix_space (tokenizer.ggml.add_space_prefix); the chat
// template is text, or with named templates the list of {"name", "template"} transformers
// keeps them in (the unnamed one "default"). Throws ck::key_error for text that is not UTF-8.
std::string tokenizer_config_text(const GgufTokenizer& tokenizer, const TokenizerConfigParts& parts,
                                  TokenizerStyle style);

}  // namespace ckplugin::hf
