// UTF-8 well-formedness, as JSON parsers and GGUF-lite judge it: overlong forms, surrogates
// and code points past U+10FFFF are not well-formed. Formats that store text as JSON (GGUF-lite
// metadata lines, the safetensors header) check names and strings with it.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "ck/export.hpp"

namespace ck {

// Length (1 to 4) of the well-formed UTF-8 sequence that starts at s[i], or 0 when the bytes
// there do not form one. `i` must be less than s.size().
CK_SDK_API std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept;

// Index of the first byte that is not part of well-formed UTF-8, or nullopt when all of `s` is.
CK_SDK_API std::optional<std::size_t> invalid_utf8_at(std::string_view s) noexcept;

}  // namespace ck
