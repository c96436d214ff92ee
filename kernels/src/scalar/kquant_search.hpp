// What the K-quant quantizers with and without importance weights share (quantize_kquants.cpp,
// which defines the functions declared here, and quantize_weighted_kquants.cpp, which also
// holds the legacy types' weighted quantizers): ggml's rounding trick, its searches for a group's
// scale, and the second half of each block encoder, which requantizes the values against the scales
// already stored in the block and packs the codes. ggml's _ref and _impl quantizers differ
// only in how they choose those scales, so one copy of the rest serves both.
//
// A block is built in a local byte array `b` (the block's layout, little-endian) with the
// codes of its values in L, one byte each, before being packed.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "ck/kernels/float_convert.hpp"
#include "quantize_common.hpp"

// Inside scalar, so that nearest_int, group_max_eps and make_qp_quants (quantize_common.hpp)
// are ours too.
namespace ck::kernels::scalar::kquant {

using u8 = std::uint8_t;

constexpr int qk_k = 256;

inline float to_f(int v) {
    return static_cast<float>(v);
}

// Stores v as f16 at p and returns the value ggml reads back from it (GGML_FP16_TO_FP32).
inline float store_f16(u8* p, float v) {
    const std::uint16_t h = f32_to_f16(v);
    p[0] = static_cast<u8>(h & 0xff);
    p[1] = static_cast<u8>(h >> 8);
    return f16_to_f32(h);
}

inline float load_f16(const u8* p) {
    return f16_to_f32(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
}

// Sum of x[i]^2 over n values, accumulated left to right in f32 as ggml does.
inline float sum_of_squares(const float* x, std::size_t n) {
    float sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += x[i] * x[i];
    return sum;
}

// The weights ggml's _impl quantizers search with: the imatrix entry scaled by the value's rms
// deviation, quant_weights[i] * sqrt(sigma2 + x[i]^2). Returns their sum (left to right, as the
// K-quants weigh their sub-block scales by it).
inline float importance_weights(const float* x, const float* quant_weights, float sigma2, int n,
                                float* weights) {
    float sum = 0;
    for (int i = 0; i < n; ++i) {
        weights[i] = quant_weights[i] * std::sqrt(sigma2 + x[i] * x[i]);
        sum += weights[i];
    }
    return sum;
}

// ggml's make_qkx2_quants, which is also its make_qkx3_quants whenever weights are given (the
// two differ only in `max == min` versus `max <= min`, and max < min cannot happen: min starts
// at x[0] and only drops, or is raised to 0 when max > 0). Codes L in [0, nmax] (n <= 32) and a
// scale and min (returned as the_min >= 0, value = scale * L - the_min) minimising the weighted
// error (absolute when use_mad, squared otherwise).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, u8* L, float& the_min,
                       float rmin, float rdelta, int nstep, bool use_mad);

// ggml's make_qx_quants with rmse_type 1: symmetric codes in [-nmax, nmax - 1] (stored in L
// offset by nmax) for n <= 32 values and their least-squares scale, under `weights`, or x^2
// when weights is nullptr.
float make_qx_quants(int n, int nmax, const float* x, const float* weights, u8* L);

// The second half of each block encoder: requantize x against the scales stored in b and pack
// the codes into b (L is scratch, except where a sub-block's scale is 0: there ggml keeps the
// codes the search chose, so L must hold them on entry).
void encode_q2_K_codes(const float* x, u8* b, u8* L);
void encode_q3_K_codes(const float* x, u8* b, u8* L);
void encode_q4_K_codes(const float* x, u8* b, u8* L);
void encode_q5_K_codes(const float* x, u8* b, u8* L);

// Q3_K's sub-block scale j (6-bit code, 0..63) into the 12 scale bytes at sc, which start zeroed.
void pack_q3_K_scale(u8* sc, int j, int code);

// Q4_K / Q5_K's 8 six-bit scale and min codes into the 12 scale bytes at sc, unmasked as ggml
// packs them (a code above 63, which only a negative scale could give, spills as it does).
void pack_k4_scales(u8* sc, const u8* scale_codes, const u8* min_codes);

// One Q6_K block (210 bytes) of x, its sub-block scales searched under quant_weights (ggml's
// _impl passes the imatrix entries straight through), or x^2 when quant_weights is nullptr (the
// reference quantizer).
void quantize_block_q6_K(const float* x, const float* quant_weights, std::byte* out);

}  // namespace ck::kernels::scalar::kquant
