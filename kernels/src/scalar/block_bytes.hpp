// Little-endian field access inside quantized blocks, shared by the scalar kernels. Blocks sit
// at any byte offset, so fields are assembled from bytes, never read through a cast pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ck/kernels/float_convert.hpp"

namespace ck::kernels::scalar {

using u8 = std::uint8_t;

inline const u8* bytes_of(const std::byte* p) {
    return reinterpret_cast<const u8*>(p);
}

inline std::uint16_t load_u16(const u8* p) {
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

inline std::uint32_t load_u32(const u8* p) {
    return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
           (std::uint32_t(p[3]) << 24);
}

inline float load_half(const u8* p) {
    return f16_to_f32(load_u16(p));
}

// A block's f16 field, written in the byte order GGUF and the host share (little-endian).
inline void store_half(std::byte* out, float v) {
    const std::uint16_t h = f32_to_f16(v);
    std::memcpy(out, &h, 2);
}

}  // namespace ck::kernels::scalar
