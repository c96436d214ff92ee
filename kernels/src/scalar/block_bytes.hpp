// Little-endian field access inside quantized blocks, shared by the scalar kernels. Blocks sit
// at any byte offset, so fields are assembled from bytes, never read through a cast pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ck/kernels/float_convert.hpp"
#include "ck/support/little_endian.hpp"

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

// get_scale_min_k4: the 6-bit scale and min of sub-block j from Q4_K/Q5_K's 12 scale bytes.
inline void scale_min_k4(int j, const u8* s, int& sc, int& m) {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// Runs decode(block, out) on each of the n / Elements blocks of Bytes bytes, `out` moving on by
// Elements floats: the outer loop of every block-by-block dequantizer. `decode` should take
// its output as `float* __restrict`, as the kernels do, so the compiler knows the block bytes
// are not written through it.
template <std::size_t Elements, std::size_t Bytes, class Decode>
inline void for_each_block(const std::byte* blocks, float* out, std::size_t n, Decode decode) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / Elements; ++i, b += Bytes, out += Elements) decode(b, out);
}

// Runs encode(values, block) on each of the n / Elements runs of values, `block` moving on by
// Bytes: the outer loop of every block-by-block quantizer.
template <std::size_t Elements, std::size_t Bytes, class Encode>
inline void for_each_block_encoded(const float* x, std::byte* out, std::size_t n, Encode encode) {
    for (std::size_t i = 0; i < n / Elements; ++i, x += Elements, out += Bytes) encode(x, out);
}

// A row quantizer with importance weights (the WeightedQuantizeRowFn of quantize_weighted.hpp)
// made of a block quantizer: n / Elements blocks of Bytes bytes, each from its values and its
// slice of the weights (nullptr when the row has none).
template <std::size_t Elements, std::size_t Bytes,
          void (*QuantizeBlock)(const float* x, const float* weights, std::byte* out)>
void quantize_row_by_blocks(const float* x, std::byte* out, std::size_t n, const float* weights) {
    for (std::size_t i = 0; i < n / Elements; ++i)
        QuantizeBlock(x + Elements * i, weights ? weights + Elements * i : nullptr,
                      out + Bytes * i);
}

// ggml's inverse of a block scale: 1 / d, or 0 when d is 0 (every code then comes out as the
// one for 0).
inline float inverse_scale(float d) {
    return d != 0.0f ? 1.0f / d : 0.0f;
}

// A block's f16 field, written little-endian as GGUF stores it.
inline void store_half(std::byte* out, float v) {
    ck::le::store(out, f32_to_f16(v));
}

}  // namespace ck::kernels::scalar
