// The safetensors container (Hugging Face): u64 LE header length N, N bytes of JSON (padded
// with spaces so the data starts 8-byte aligned), then the data. The JSON maps each tensor name
// to {"dtype", "shape" (PyTorch order, outermost first), "data_offsets": [begin, end]}
// relative to the data start, plus an optional "__metadata__" object of string -> string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ck/ggml_types.hpp"

namespace ck::safetensors {
using namespace ck;

inline constexpr std::string_view metadata_key = "__metadata__";
inline constexpr std::uint64_t data_alignment = 8;

// What ckhost records in __metadata__ beside the GGUF keys (README.md).
inline constexpr std::string_view format_entry = "format";
inline constexpr std::string_view format_value = "ckhost";
inline constexpr std::string_view gguf_prefix = "gguf.";
inline constexpr std::string_view gguf_types_entry = "ckhost.gguf_types";
// Entries of another tool's __metadata__ are kept as string metadata under this prefix.
inline constexpr std::string_view foreign_prefix = "safetensors.";

struct Dtype {
    std::string_view name;
    std::uint32_t ggml_type;
    std::uint32_t size;
};

// The dtypes with a ggml equivalent. U8 has none: it is read as i8 (same bytes), which is what
// repacked codes are (repacked_tensors.hpp).
inline constexpr Dtype dtypes[] = {
    {"F64", static_cast<std::uint32_t>(GgmlType::f64), 8},
    {"F32", static_cast<std::uint32_t>(GgmlType::f32), 4},
    {"F16", static_cast<std::uint32_t>(GgmlType::f16), 2},
    {"BF16", static_cast<std::uint32_t>(GgmlType::bf16), 2},
    {"I64", static_cast<std::uint32_t>(GgmlType::i64), 8},
    {"I32", static_cast<std::uint32_t>(GgmlType::i32), 4},
    {"I16", static_cast<std::uint32_t>(GgmlType::i16), 2},
    {"I8", static_cast<std::uint32_t>(GgmlType::i8), 1},
    {"U8", static_cast<std::uint32_t>(GgmlType::i8), 1},
};

// Dtypes safetensors defines that ggml cannot hold.
inline constexpr std::string_view foreign_dtypes[] = {"BOOL",    "U16",     "U32",     "U64",
                                                      "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3",
                                                      "F6_E3M2", "F4",      "C64"};

inline const Dtype* find_dtype(std::string_view name) {
    for (const Dtype& d : dtypes)
        if (d.name == name) return &d;
    return nullptr;
}

// The dtype a ggml type is written as (I8 for i8; the writer says U8 for repacked codes).
inline const Dtype* dtype_for(std::uint32_t ggml_type) {
    for (const Dtype& d : dtypes)
        if (d.ggml_type == ggml_type) return &d;
    return nullptr;
}

inline bool is_foreign_dtype(std::string_view name) {
    for (std::string_view d : foreign_dtypes)
        if (d == name) return true;
    return false;
}

// ggml's ne (innermost first) <-> PyTorch's shape (outermost first).
inline std::vector<std::int64_t> reversed(const std::vector<std::int64_t>& dims) {
    return {dims.rbegin(), dims.rend()};
}

// What comes before a file's data: the header's length N (8 bytes, little-endian), then the
// header's JSON text padded with spaces to N bytes so that the data starts data_alignment-aligned.
// One place for the container's framing: the safetensors plugin and the hf writer both write it.
inline std::string file_preamble(std::string_view header_json) {
    const std::uint64_t length =
        header_json.size() +
        (data_alignment - (8 + header_json.size()) % data_alignment) % data_alignment;
    std::string preamble(8, '\0');
    for (std::size_t i = 0; i < 8; ++i) preamble[i] = static_cast<char>((length >> (8 * i)) & 0xff);
    preamble += header_json;
    preamble.resize(8 + length, ' ');
    return preamble;
}

}  // namespace ck::safetensors
