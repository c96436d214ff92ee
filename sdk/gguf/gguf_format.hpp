// Constants of the GGUF container shared by the reader and the writer (gguf.md).
#pragma once

#include <cstdint>
#include <string_view>

namespace ckplugin::gguf {
using namespace ck;

inline constexpr std::string_view magic = "GGUF";
inline constexpr std::uint32_t min_version = 2;
inline constexpr std::uint32_t max_version = 3;
inline constexpr std::uint32_t write_version = 3;
inline constexpr std::uint32_t default_alignment = 32;
inline constexpr std::string_view alignment_key = "general.alignment";
inline constexpr std::string_view quantization_version_key = "general.quantization_version";
inline constexpr std::uint32_t quantization_version = 2;
inline constexpr std::uint32_t max_dims = 4;
inline constexpr std::uint64_t max_name_bytes = 63;            // ggml's GGML_MAX_NAME - 1
inline constexpr std::uint64_t max_string_bytes = 1ull << 30;  // keys and string values
inline constexpr std::uint64_t max_array_count = 1ull << 30;

inline std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

inline bool is_power_of_two(std::uint64_t n) {
    return n != 0 && (n & (n - 1)) == 0;
}

}  // namespace ckplugin::gguf
