// Exact widening of F16 and BF16 values to F32 bit patterns, for norms and biases (every value
// of either type is representable in F32, so nothing is rounded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "ck/ggml_types.hpp"
#include "ck/support/little_endian.hpp"

namespace ckplugin::bump {
using namespace ck;

inline std::uint32_t f16_to_f32_bits(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1Fu;
    std::uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0x1F) return sign | 0x7F800000u | (mantissa << 13);  // inf, NaN payload kept
    if (exponent == 0) {
        if (mantissa == 0) return sign;
        // Subnormal: mantissa * 2^-24; normalise so the leading 1 becomes implicit.
        std::uint32_t shifts = 0;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            ++shifts;
        }
        return sign | ((113 - shifts) << 23) | ((mantissa & 0x3FFu) << 13);
    }
    return sign | ((exponent + 112) << 23) | (mantissa << 13);
}

inline std::uint32_t bf16_to_f32_bits(std::uint16_t b) {
    return std::uint32_t(b) << 16;
}

// Little-endian F16 or BF16 elements to little-endian F32 bytes.
inline std::vector<std::byte> widen_to_f32(std::span<const std::byte> in, std::uint32_t type) {
    const bool bf16 = type == static_cast<std::uint32_t>(GgmlType::bf16);
    std::vector<std::byte> out(in.size() * 2);
    for (std::size_t i = 0; i < in.size() / 2; ++i) {
        const auto half = ck::le::load<std::uint16_t>(in.data() + 2 * i);
        ck::le::store(out.data() + 4 * i, bf16 ? bf16_to_f32_bits(half) : f16_to_f32_bits(half));
    }
    return out;
}

}  // namespace ckplugin::bump
