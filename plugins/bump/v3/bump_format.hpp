// Constants of the bump v3 container (bump.md) shared by the writer and the reader: the header
// layout, C-Kernel-Engine's dtype codes and how they map to ggml types.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ckplugin::bump {

inline constexpr std::string_view magic = "BUMPWGT3";
inline constexpr std::uint32_t version = 3;
inline constexpr std::uint32_t model_type_llama = 1;
inline constexpr std::size_t header_bytes = 128;
inline constexpr std::size_t checksum_offset = 0x40;
inline constexpr std::size_t reserved_offset = 0x60;
inline constexpr std::uint64_t table_count_offset = 128;  // u32 N, then N dtype bytes
inline constexpr std::uint64_t context_alignment = 16;

// C-Kernel-Engine's CKDataType: the code stored in the dtype table is the enumerator's position
// (FP32 = 0 ... Q8_K = 9).
enum class Dtype : std::uint8_t { fp32, bf16, fp16, int8, int4, q4_0, q4_k, q6_k, q8_0, q8_k };
static_assert(static_cast<int>(Dtype::q8_k) == 9);

// "FP32", "Q4_K", ... ; "unknown" past the table.
std::string_view dtype_name(std::uint8_t code) noexcept;
// The ggml type with the same bytes; nullopt for INT8/INT4 (no ggml equivalent) and unknown codes.
std::optional<std::uint32_t> ggml_type_of(std::uint8_t code) noexcept;
// The code a weight of this ggml type is stored under; only the types the runtime accepts for
// weights (F32, Q4_K, Q6_K), nullopt otherwise.
std::optional<std::uint8_t> weight_dtype_of(std::uint32_t ggml_type) noexcept;

// The fixed 128-byte header. Every field little-endian.
struct Header {
    std::uint32_t version = bump::version;
    std::uint32_t model_type = model_type_llama;
    std::uint32_t num_layers = 0;
    std::uint32_t vocab_size = 0;
    std::uint32_t embed_dim = 0;
    std::uint32_t context_len = 0;
    std::uint32_t num_heads = 0;
    std::uint32_t head_dim = 0;
    std::uint64_t aligned_embed_dim = 0;
    std::uint64_t aligned_head_dim = 0;
    std::uint64_t aligned_context = 0;
    std::array<std::uint8_t, 32> checksum{};
    std::array<std::uint8_t, 32> reserved{};
};

std::array<std::byte, header_bytes> encode_header(const Header& h);
// Decodes without judging the values; the caller checks the magic with has_magic().
Header decode_header(std::span<const std::byte, header_bytes> bytes);
bool has_magic(const unsigned char* head, std::size_t size, const char* path = nullptr) noexcept;

inline std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

// N = 14 L + 4: token_emb, pos_emb, 14 slots per layer, final_ln_weight, final_ln_bias.
inline constexpr std::uint64_t slots_per_layer = 14;
inline std::uint64_t slot_count(std::uint64_t layers) {
    return slots_per_layer * layers + 4;
}

}  // namespace ckplugin::bump
