// tokenizer.json for a byte-level BPE vocabulary, as the Hugging Face tokenizers library saves
// it, one family per tokenizer.ggml.pre name the reader knows: pre_tokenizer.cpp's table turned
// around (its normalizer and pre-tokenizer steps), with the post-processor, decoder and BPE
// settings of the family's real tokenizer.json (Llama 3.1 for llama-bpe, Qwen3 for qwen2, GPT-2,
// Gemma 3 for granite-embed-multi-311m).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ckplugin::hf {

struct BpeFamily {
    std::string_view pre;              // tokenizer.ggml.pre
    std::string_view tokenizer_class;  // tokenizer_config.json's
    bool clean_up_tokenization_spaces = false;
    // A SentencePiece vocabulary saved as BPE (Gemma 3's tokenizer.json): every token is in the
    // model's vocabulary, the added ones too, and user-defined tokens had U+2581 where the
    // converter wrote spaces (its normalizer turns every space into one).
    bool sentencepiece_layout = false;
    bool pre_trim_offsets = false;     // trim_offsets of the pre-tokenizer's ByteLevel step
    std::string_view post_byte_level;  // the post-processor's ByteLevel step (JSON), "" for none
    std::string_view decoder;          // JSON
    std::string_view model;            // JSON: the BPE model's settings before vocab and merges
};

// The family for a tokenizer.ggml.pre name, or nullptr.
const BpeFamily* find_bpe_family(std::string_view pre);
// "llama-bpe, qwen2, ..." for messages.
std::string bpe_family_names();

// The post-processor: the family's ByteLevel step and `template_processing` (null: none), as a
// Sequence when both are there.
nlohmann::ordered_json bpe_post_processor(const BpeFamily& family,
                                          const nlohmann::ordered_json& template_processing);

// The decoder and model settings of the family, for the reader's is_sentencepiece_as_bpe.
nlohmann::json bpe_model_and_decoder(const BpeFamily& family);

struct AddedTokenEntry {
    std::uint32_t id = 0;
    bool special = false;
};

// What goes into tokenizer.json. Every text given must be valid UTF-8 (the caller checks it,
// naming the GGUF key).
struct BpeTokenizerJson {
    const BpeFamily* family = nullptr;
    const std::vector<std::string_view>* texts = nullptr;  // the token texts by id
    std::vector<std::uint32_t> vocab;    // ids of the model's vocabulary, ascending
    std::vector<AddedTokenEntry> added;  // ascending ids
    const std::vector<std::string_view>* merges = nullptr;  // "a b", as the GGUF has them
    nlohmann::ordered_json post_processor;
    std::optional<std::string> unk_token;  // the model's (sentencepiece_layout)
};

// The file's text (serde_json's pretty form, which nlohmann's indent-2 dump shares). Throws
// ck::key_error naming tokenizer.ggml.merges for a merge without a space between its parts.
std::string tokenizer_json_text(const BpeTokenizerJson& tokenizer);

}  // namespace ckplugin::hf
