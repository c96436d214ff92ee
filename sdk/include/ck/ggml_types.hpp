// The ggml type table (gguf.md): on-disk ids, block sizes and byte sizes, and the size
// arithmetic every format needs, done with overflow checks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ck/export.hpp"

namespace ck {

// Named ids for the types this code refers to directly; any id can be looked up in the table.
enum class GgmlType : std::uint32_t {
    f32 = 0,
    f16 = 1,
    q4_0 = 2,
    q4_1 = 3,
    q5_0 = 6,
    q5_1 = 7,
    q8_0 = 8,
    q8_1 = 9,
    q2_k = 10,
    q3_k = 11,
    q4_k = 12,
    q5_k = 13,
    q6_k = 14,
    q8_k = 15,
    iq2_xxs = 16,
    iq2_xs = 17,
    iq3_xxs = 18,
    iq1_s = 19,
    iq4_nl = 20,
    iq3_s = 21,
    iq2_s = 22,
    iq4_xs = 23,
    i8 = 24,
    i16 = 25,
    i32 = 26,
    i64 = 27,
    f64 = 28,
    iq1_m = 29,
    bf16 = 30,
    tq1_0 = 34,
    tq2_0 = 35,
    mxfp4 = 39,
    nvfp4 = 40,
    q1_0 = 41,
    q2_0 = 42,
};

inline constexpr std::uint32_t ggml_type_count = 43;  // ids >= this are unknown today

struct TypeInfo {
    std::uint32_t id;
    std::string_view name;      // ggml's own spelling: "f32", "q4_K", "iq4_nl"
    std::uint32_t block_size;   // elements per block; 0 for removed ids
    std::uint32_t block_bytes;  // bytes per block; 0 for removed ids
    bool removed;               // id once used, now gone (4, 5, 31-33, 36-38)
    bool quantized;             // block-quantized (everything but plain float/int types)
    bool dequantizable;         // ggml has a to_float for it (not Q8_1, Q8_K, integers)
};

// The entry for `id`, or nullptr when the id is past the end of the table.
CK_SDK_API const TypeInfo* find_type(std::uint32_t id) noexcept;
inline const TypeInfo* find_type(GgmlType t) noexcept {
    return find_type(static_cast<std::uint32_t>(t));
}
// Case-insensitive lookup by name ("Q4_K" and "q4_k" both work); nullptr when unknown.
CK_SDK_API const TypeInfo* find_type(std::string_view name) noexcept;
// "q4_K" for known ids, "removed(4)" or "unknown(57)" otherwise.
CK_SDK_API std::string_view type_name(std::uint32_t id) noexcept;
CK_SDK_API std::span<const TypeInfo> type_table() noexcept;

// Bytes of a row of n elements; nullopt when n is not a multiple of the block size, the type
// is removed or unknown, or the size overflows.
CK_SDK_API std::optional<std::uint64_t> row_bytes(std::uint32_t type, std::uint64_t n) noexcept;

// Element count of a shape; nullopt on a negative dimension or on overflow of int64.
CK_SDK_API std::optional<std::uint64_t> element_count(std::span<const std::int64_t> ne) noexcept;

// Bytes of a whole tensor (ne0 is the row length); nullopt when any of the above fails.
CK_SDK_API std::optional<std::uint64_t> tensor_bytes(std::uint32_t type,
                                                     std::span<const std::int64_t> ne) noexcept;

}  // namespace ck
