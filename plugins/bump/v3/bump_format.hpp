// The bump v3 container (bump.md) shared by its writer and its reader: the header's fields and
// offsets, and the slot count.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "dtype_codes.hpp"
#include "fixed_header.hpp"

namespace ckplugin::bump {

inline constexpr std::string_view magic = v3_magic;
inline constexpr std::uint32_t version = 3;
inline constexpr std::uint32_t model_type_llama = 1;
inline constexpr std::size_t checksum_offset = checksum_offset_after(8, 3);
inline constexpr std::size_t reserved_offset = checksum_offset + 32;
inline constexpr std::uint64_t table_count_offset = header_bytes;  // u32 N, then N dtype bytes
inline constexpr std::uint64_t context_alignment = 16;
static_assert(checksum_offset == 0x40 && reserved_offset == 0x60);

// The fixed 128-byte header: 8 u32 fields from 0x08, 3 u64 fields from 0x28, the checksum,
// 32 reserved bytes.
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
    Digest checksum{};
    std::array<std::uint8_t, 32> reserved{};
};

std::array<std::byte, header_bytes> encode_header(const Header& h);
// Decodes without judging the values; the caller checks the magic.
Header decode_header(std::span<const std::byte, header_bytes> bytes);

// N = 14 L + 4: token_emb, pos_emb, 14 slots per layer, final_ln_weight, final_ln_bias.
inline constexpr std::uint64_t slots_per_layer = 14;
inline std::uint64_t slot_count(std::uint64_t layers) {
    return slots_per_layer * layers + 4;
}

}  // namespace ckplugin::bump
