// Exact conversions between f32 and the 16-bit float formats, as ggml does them.
#pragma once

#include <bit>
#include <cstdint>

namespace ck::kernels {

// f16 -> f32 is an exact widening. Branch-free, so loops over it vectorise: a normal or
// infinite/NaN half is rebiased by one multiply by 2^-112 (which also quietens a signalling
// NaN, as ggml's generic code and the F16C instruction do); a subnormal one is rebuilt with
// the magic-number subtraction. Checked against a bit-by-bit reference for all 65536 inputs.
inline float f16_to_f32(std::uint16_t h) {
    const std::uint32_t w = std::uint32_t(h) << 16;
    const std::uint32_t sign = w & 0x80000000u;
    const std::uint32_t two_w = w + w;
    const float normal = std::bit_cast<float>((two_w >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
    const float subnormal = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
    // Select with a mask, not a conditional: GCC keeps a conditional as a branch here.
    const std::uint32_t is_subnormal = 0u - std::uint32_t(two_w < (1u << 27));
    const std::uint32_t magnitude = (std::bit_cast<std::uint32_t>(subnormal) & is_subnormal) |
                                    (std::bit_cast<std::uint32_t>(normal) & ~is_subnormal);
    return std::bit_cast<float>(sign | magnitude);
}

// bf16 -> f32: the upper half of an f32, exactly.
inline float bf16_to_f32(std::uint16_t b) {
    return std::bit_cast<float>(std::uint32_t(b) << 16);
}

// f32 -> f16, round to nearest even; NaN becomes 0x7e00 with the sign kept (ggml's generic
// conversion).
inline std::uint16_t f32_to_f16(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
    const std::uint32_t abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u) return sign | 0x7e00;
    if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: infinity
    if (abs < 0x38800000u) {
        // Result is subnormal (or zero): shift the full mantissa with round to nearest even.
        if (abs < 0x33000000u) return sign;  // below half the smallest subnormal
        const std::uint32_t exponent = abs >> 23;
        const std::uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
        const std::uint32_t shift = 126 - exponent;  // 14..24
        std::uint32_t value = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1);
        const std::uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (value & 1))) ++value;
        return sign | static_cast<std::uint16_t>(value);
    }
    std::uint32_t value = abs - 0x38000000u;  // rebias the exponent from 127 to 15
    const std::uint32_t rest = value & 0x1fff;
    value >>= 13;
    if (rest > 0x1000 || (rest == 0x1000 && (value & 1))) ++value;
    return sign | static_cast<std::uint16_t>(value);
}

// f32 -> f16 as numpy's astype(float16), with which llama.cpp's converters write every F16
// tensor: f32_to_f16 for every number; a NaN keeps its sign and the top ten bits of its
// payload, 0x7c00 | mantissa >> 13 (0x7c01 when those ten bits are zero), so a signalling NaN
// stays signalling where ggml writes 0x7e00 and F16C 0x7e00 | mantissa >> 13.
inline std::uint16_t f32_to_f16_numpy(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7fffffffu) <= 0x7f800000u) return f32_to_f16(f);
    const std::uint32_t payload = (x & 0x7fffffu) >> 13;
    return static_cast<std::uint16_t>(((x >> 16) & 0x8000) | 0x7c00 | (payload ? payload : 1));
}

// f32 -> bf16, round to nearest even; NaN is kept quiet: (bits >> 16) | 0x40 (ggml).
inline std::uint16_t f32_to_bf16(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40);
    return static_cast<std::uint16_t>((x + (0x7fffu + ((x >> 16) & 1))) >> 16);
}

}  // namespace ck::kernels
