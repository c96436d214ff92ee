// The byte-level BPE side of export_tokenizer (tokenizer.ggml.model gpt2): tokenizer.json and
// tokenizer_config.json laid out so that the reader (bpe_vocab.cpp, special_vocab.cpp,
// post_processor.cpp) gives back the GGUF's tokenizer keys: the vocabulary and added tokens
// from the token types, the special ids from the config's texts or config.json, the add flags
// from a TemplateProcessing and the config's flags, in the GGUF's order.
#pragma once

#include <vector>

#include "export_tokenizer.hpp"
#include "tokenizer.hpp"
#include "tokenizer_metadata.hpp"

namespace ckplugin::hf {

// tokenizer.json, then tokenizer_config.json. Throws ck::key_error naming tokenizer.ggml.pre for
// a pre-tokenizer it has no family for, tokenizer.ggml.model for a family whose converter class
// reads only tokenizer.model (Gemma 2), tokenizer.ggml.tokens for a text that is not UTF-8 or
// is there twice.
std::vector<ExportedFile> export_byte_level_bpe(const GgufTokenizer& tokenizer,
                                                TokenizerStyle style);

}  // namespace ckplugin::hf
