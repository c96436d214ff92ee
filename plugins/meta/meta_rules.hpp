// What an edit may do to a key: the key names GGUF allows, the keys no edit may touch, and the
// small table of keys whose type llama.cpp (or the format) fixes. Every refusal is a usage
// error naming the key, raised while planning, before any output exists.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ck/error.hpp"
#include "ck/metadata.hpp"

namespace ckplugin::meta {
using namespace ck;

// ggml's docs/gguf.md: keys are at most 2^16 - 1 bytes.
inline constexpr std::size_t max_key_bytes = 65535;
// ggml's GGML_MAX_NAME - 1: llama.cpp cannot load a longer tensor name.
inline constexpr std::size_t max_tensor_name_bytes = 63;
// The gguf reader's bound on a string (gguf.md, "Validation" 4): a longer one could not be read
// back.
inline constexpr std::size_t max_string_bytes = std::size_t{1} << 30;

inline constexpr std::string_view architecture_key = "general.architecture";
// The keys llama.cpp reads special token ids from (llama-vocab: bos, eos, eot, pad, fim_*...),
// an fnmatch glob.
inline constexpr const char* token_id_keys = "tokenizer.ggml.*_token_id";
inline constexpr std::string_view tokens_key = "tokenizer.ggml.tokens";

// "key 'NAME'", the subject of every error about a key (the SDK's format).
using ck::key_subject;

// A usage error about `subject` (a key or a tensor), raised by option `option` (`set`, `del`,
// ...): "SUBJECT: OPTION: MESSAGE" once the host prints it. `file` names the file concerned,
// when there is one (the model, or set_file's file).
[[noreturn]] void refuse(std::string_view option, std::string subject, const std::string& message,
                         std::string file = {});

// A key name an edit creates: non-empty, valid UTF-8, at most max_key_bytes.
void check_key_name(std::string_view option, std::string_view key);

// Keys the writer or another stage owns (split.*, ckhost.*) and general.architecture, which
// may be set (to a str) but never removed. `removing`: a delete, or the old name of a rename.
void check_editable(std::string_view option, std::string_view key, bool removing);

// A value an edit gives `key`: the type llama.cpp reads it as, when the table below knows the
// key (`arch`: the model's general.architecture, for `<arch>.*` keys), and general.alignment's
// power of two.
void check_value_type(std::string_view option, std::string_view key, const Value& value,
                      std::string_view arch);

// The type llama.cpp reads `key` as, when the table knows the key.
std::optional<ValueType> known_type(std::string_view key, std::string_view arch);

}  // namespace ckplugin::meta
