// C-Kernel-Engine's CKDataType codes, which the dtype table of both bump versions stores one per
// slot or entry, and how they map to ggml types.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ckplugin::bump {

// The code stored in the dtype table is the enumerator's position (FP32 = 0 ... Q8_K = 9).
enum class Dtype : std::uint8_t { fp32, bf16, fp16, int8, int4, q4_0, q4_k, q6_k, q8_0, q8_k };
static_assert(static_cast<int>(Dtype::q8_k) == 9);

inline constexpr std::uint8_t code_of(Dtype dtype) noexcept {
    return static_cast<std::uint8_t>(dtype);
}

// "FP32", "Q4_K", ... ; "unknown" past the table.
std::string_view dtype_name(std::uint8_t code) noexcept;
// The ggml type with the same bytes; nullopt for INT8/INT4 (no ggml equivalent) and unknown codes.
std::optional<std::uint32_t> ggml_type_of(std::uint8_t code) noexcept;
// The code a weight of this ggml type is stored under; only the types the runtime accepts for
// weights (F32, Q4_K, Q6_K), nullopt otherwise.
std::optional<std::uint8_t> weight_dtype_of(std::uint32_t ggml_type) noexcept;

inline std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

}  // namespace ckplugin::bump
