// The tokenizer.* metadata of a checkpoint, as llama.cpp's converter writes it: from a
// SentencePiece tokenizer.model (_create_vocab_sentencepiece, or Phi-3's own reading) or a
// byte-level BPE tokenizer.json (get_vocab_base), then gguf-py's SpecialVocab: added tokens,
// special token ids, add_bos/add_eos/add_sep and the chat template.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/metadata.hpp"

namespace ckplugin::hf {

// How a model family's converter class writes its vocabulary where it departs from the
// common way (TextModel's _set_vocab_sentencepiece, else _set_vocab_gpt2).
enum class TokenizerStyle {
    // tokenizer.model, else tokenizer.json (the Qwen2 and Qwen3 classes).
    common,
    // TextModel's own set_vocab, for a class without one (Qwen3-MoE's): tokenizer.json only,
    // even beside a tokenizer.model.
    gpt2,
    // Phi3MiniModel.set_vocab: tokenizer_config.json's tokenizer_class GPT2Tokenizer means
    // tokenizer.json, else tokenizer.model is required; added tokens (tokenizer_config.json's,
    // then tokenizer.json's) are USER_DEFINED, or CONTROL when `special`, with no look-special
    // test and U+2581 kept; an id beyond vocab_size is an error, as the converter fails on it.
    phi3,
    // Gemma2Model: tokenizer.model only, tokenizer.ggml.add_space_prefix false at the end.
    gemma,
    // Gemma3Model: as gemma with a tokenizer.model; without one, tokenizer.json as common
    // (model gpt2, no add_space_prefix).
    gemma3,
    // LlamaModel (Llama, Mistral, Mixtral): as common, after tokenizer_config.json's
    // add_prefix_space (tokenizer.ggml.add_space_prefix, first) when it is set. A tokenizer.json
    // that is a SentencePiece model saved as BPE is refused (the converter reads it with
    // LlamaHfVocab, which ckhost does not reproduce).
    llama,
};

// Appends the tokenizer keys to `metadata` and returns the number of tokens the converter
// counts for the tokenizer, which Gemma 3's class cuts token_embd to (keeping every row when
// the tensor has fewer): the number of tokens written, except for gemma3 reading
// tokenizer.json, where it is len(model.vocab) + len(added_tokens) of that file.
// `vocab_size` is config.json's (the arrays are padded or cut to it, as the converter does);
// `config` is config.json itself (its <type>_token_id entries). Throws ck::Error when the
// folder has no tokenizer ckhost can read as the converter would.
std::size_t add_tokenizer(const std::filesystem::path& folder,
                          std::optional<std::uint32_t> vocab_size,
                          const nlohmann::ordered_json& config, TokenizerStyle style,
                          ck::Context& context, ck::Metadata& metadata);

}  // namespace ckplugin::hf
