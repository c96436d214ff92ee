// The 128-byte header both bump versions start with: the 8-byte magic (`BUMPWGT3`, `BUMPWGT4`),
// the version's u32 fields, its u64 fields, the 32-byte SHA-256 of everything after the header,
// then reserved zero bytes up to 128; every field little-endian. One codec serves both
// versions: each lists its fields in file order, so the checksum's offset follows from them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "sha256_stream.hpp"

namespace ckplugin::bump {

inline constexpr std::size_t header_bytes = 128;
inline constexpr std::size_t magic_bytes = 8;
inline constexpr std::string_view v3_magic = "BUMPWGT3";
inline constexpr std::string_view v4_magic = "BUMPWGT4";

// 3 or 4 by the magic; nullopt for anything else, or fewer than 8 bytes.
std::optional<std::uint32_t> bump_version(const unsigned char* head, std::size_t size) noexcept;

// Where the checksum of a header with these many fields starts.
constexpr std::size_t checksum_offset_after(std::size_t u32_fields, std::size_t u64_fields) {
    return magic_bytes + 4 * u32_fields + 8 * u64_fields;
}

// Reserved bytes not given are zero.
std::array<std::byte, header_bytes> encode_fixed_header(
    std::string_view magic, std::initializer_list<std::uint32_t> u32_fields,
    std::initializer_list<std::uint64_t> u64_fields, const Digest& checksum,
    std::span<const std::uint8_t> reserved = {});

// Decodes the fields into the variables given, in the same order as encode_fixed_header's;
// judges nothing (the magic is the caller's to check).
void decode_fixed_header(std::span<const std::byte, header_bytes> bytes,
                         std::initializer_list<std::uint32_t*> u32_fields,
                         std::initializer_list<std::uint64_t*> u64_fields, Digest& checksum,
                         std::span<std::uint8_t> reserved = {});

}  // namespace ckplugin::bump
