// Constants and size arithmetic of the GGUF-lite container (docs/formats/gguf-lite.md), shared by
// the reader, the writer and the tests.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ckplugin::gguflite {

inline constexpr std::uint32_t magic = 0x474C4654;  // 'GLFT'; on disk 54 46 4C 47
inline constexpr std::uint32_t version = 1;
inline constexpr std::uint64_t header_bytes = 16;  // magic, version, n_tensors, metadata_len
inline constexpr std::uint32_t max_dims = 8;
inline constexpr std::uint64_t q4_group = 64;
// The smallest descriptor: name_len, an empty name, n_dims, one dim, dtype, offset.
inline constexpr std::uint64_t min_descriptor_bytes = 2 + 1 + 4 + 1 + 8;
inline constexpr std::string_view file_extension = ".gguflite";

enum class Dtype : std::uint8_t { f32 = 0, f16 = 1, q8 = 2, q4 = 3 };
inline constexpr std::uint8_t dtype_count = 4;

// The spec's names: "F32", "F16", "Q8_per_channel", "Q4_per_group_64".
std::string_view dtype_name(Dtype d) noexcept;
// The scheme spelling of writer options: "f32", "f16", "q8", "q4".
std::string_view scheme_name(Dtype d) noexcept;
std::optional<Dtype> dtype_from_scheme(std::string_view scheme) noexcept;
inline bool is_quantized(Dtype d) noexcept {
    return d == Dtype::q8 || d == Dtype::q4;
}

// Product of the dims; nullopt when it overflows 64 bits.
std::optional<std::uint64_t> element_count(std::span<const std::uint32_t> dims) noexcept;

// Bytes of a tensor's data. Quantized dtypes need 2-D dims (rows = dims[0], cols = dims[1])
// and, for Q4, cols a multiple of 64; nullopt when the shape does not fit the dtype or the size
// overflows.
std::optional<std::uint64_t> data_bytes(Dtype d, std::span<const std::uint32_t> dims) noexcept;

// Where the two parts of a quantized tensor lie, relative to the tensor's first byte.
struct QuantLayout {
    std::uint64_t rows = 0, cols = 0;
    std::uint64_t scales_per_row = 0;   // 1 for Q8, cols / 64 for Q4
    std::uint64_t row_value_bytes = 0;  // cols for Q8, cols / 2 for Q4
    std::uint64_t scale_bytes() const { return rows * scales_per_row * 2; }
    std::uint64_t value_bytes() const { return rows * row_value_bytes; }
};
QuantLayout quant_layout(Dtype d, std::uint64_t rows, std::uint64_t cols) noexcept;

}  // namespace ckplugin::gguflite
