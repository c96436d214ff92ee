#include "fixed_header.hpp"

#include <boost/endian/conversion.hpp>

#include <algorithm>
#include <cstring>

namespace ckplugin::bump {

using boost::endian::order;

std::optional<std::uint32_t> bump_version(const unsigned char* head, std::size_t size) noexcept {
    if (size < magic_bytes) return std::nullopt;
    if (std::memcmp(head, v3_magic.data(), magic_bytes) == 0) return 3;
    if (std::memcmp(head, v4_magic.data(), magic_bytes) == 0) return 4;
    return std::nullopt;
}

std::array<std::byte, header_bytes> encode_fixed_header(
    std::string_view magic, std::initializer_list<std::uint32_t> u32_fields,
    std::initializer_list<std::uint64_t> u64_fields, const Digest& checksum,
    std::span<const std::uint8_t> reserved) {
    std::array<std::byte, header_bytes> out{};
    auto* p = reinterpret_cast<unsigned char*>(out.data());
    std::memcpy(p, magic.data(), magic_bytes);
    std::size_t at = magic_bytes;
    for (std::uint32_t v : u32_fields) {
        boost::endian::endian_store<std::uint32_t, 4, order::little>(p + at, v);
        at += 4;
    }
    for (std::uint64_t v : u64_fields) {
        boost::endian::endian_store<std::uint64_t, 8, order::little>(p + at, v);
        at += 8;
    }
    std::memcpy(p + at, checksum.data(), checksum.size());
    at += checksum.size();
    // memcpy from an empty span's null data() is undefined even for 0 bytes (v4 has none).
    if (!reserved.empty())
        std::memcpy(p + at, reserved.data(), std::min(reserved.size(), header_bytes - at));
    return out;
}

void decode_fixed_header(std::span<const std::byte, header_bytes> bytes,
                         std::initializer_list<std::uint32_t*> u32_fields,
                         std::initializer_list<std::uint64_t*> u64_fields, Digest& checksum,
                         std::span<std::uint8_t> reserved) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t at = magic_bytes;
    for (std::uint32_t* v : u32_fields) {
        *v = boost::endian::endian_load<std::uint32_t, 4, order::little>(p + at);
        at += 4;
    }
    for (std::uint64_t* v : u64_fields) {
        *v = boost::endian::endian_load<std::uint64_t, 8, order::little>(p + at);
        at += 8;
    }
    std::memcpy(checksum.data(), p + at, checksum.size());
    at += checksum.size();
    if (!reserved.empty())
        std::memcpy(reserved.data(), p + at, std::min(reserved.size(), header_bytes - at));
}

}  // namespace ckplugin::bump
