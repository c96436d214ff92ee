// Sizes in bytes as a user types them. One reading for every size ckhost takes (the host's
// --max-memory, the gguf writer's split_max_size), so that 5000000, 2GB and 2GiB mean the same
// wherever they are given (docs/decisions/0044-one-reading-of-sizes.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ck/export.hpp"

namespace ck {

// What a unit letter without "B" after it (K, M, G, T) multiplies by. With "B" the unit says it
// itself: KB, MB, GB, TB are powers of 1000, KiB, MiB, GiB, TiB powers of 1024.
enum class BareUnit {
    binary,   // 2G = 2 * 1024^3: --max-memory, memory as free(1) and cgroups count it
    decimal,  // 2G = 2 * 1000^3: split_max_size, as llama-gguf-split --split-max-size reads it
};

// `text` in bytes: a number (digits, with a fraction or not: 1.5G) and an optional unit, its
// case ignored: none or B (bytes), K|M|G|T (as `bare` says), KB|MB|GB|TB, KiB|MiB|GiB|TiB.
// A fraction of a byte is dropped. nullopt for anything else: a sign, spaces, an exponent,
// less than one byte, more than 2^64 - 1.
CK_SDK_API std::optional<std::uint64_t> parse_byte_size(std::string_view text, BareUnit bare);

// The forms parse_byte_size takes with `bare`, for a message about a size it refused:
// "5000000 (bytes), 500K, 2G (K, M, G, T: powers of 1024), 2GB (powers of 1000), 2GiB".
CK_SDK_API std::string byte_size_forms(BareUnit bare);

}  // namespace ck
