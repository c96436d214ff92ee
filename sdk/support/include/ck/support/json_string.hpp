// One JSON string writer for every format that stores text as JSON (bump's config.json, the
// safetensors header, GGUF-lite's metadata lines), built on ck::utf8's well-formedness rules:
// an overlong form, a surrogate or a code point past U+10FFFF is never copied as text.
#pragma once

#include <string>
#include <string_view>

namespace ck::support {

enum class JsonEscape {
    // Well-formed UTF-8 copied as is; each byte that is not part of one becomes U+FFFD.
    // Escapes: \" \\ \n \r \t \b \f, other control bytes as \u00xx.
    utf8,
    // The same, with \b and \f written as \u0008 and \u000c (GGUF-lite's metadata text, which
    // must stay byte-identical to the files already written).
    utf8_short_escapes_only,
    // Python's json.dumps default (ensure_ascii): everything outside ' '..'~' escaped, code
    // points past U+FFFF as surrogate pairs, a byte that is not well-formed UTF-8 as \u00xx.
    ascii,
};

// Appends `s` as a quoted JSON string. Returns true when bytes that are not well-formed UTF-8
// had to be replaced (utf8 styles) or escaped byte by byte (ascii).
bool append_json_string(std::string& out, std::string_view s, JsonEscape style = JsonEscape::utf8);

// The same, as a new string.
std::string json_string(std::string_view s, JsonEscape style = JsonEscape::utf8);

}  // namespace ck::support
