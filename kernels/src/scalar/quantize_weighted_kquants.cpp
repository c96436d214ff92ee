// Q2_K..Q6_K and Q4_0, Q4_1, Q5_0, Q5_1 with importance weights (ggml's quantize_row_<type>_impl),
// bit-identical to ggml.
//
// ggml's _impl quantizers choose each sub-block's scale (and min) under the weights
// quant_weights[i] * sqrt(sigma2 + x[i]^2), sigma2 the mean square of the block (times 2 for
// Q3_K..Q5_K) or, for the legacy types, of the whole row; Q6_K uses the imatrix entries as
// they are. The K-quants then quantize the sub-block scales themselves with a weighted search
// (make_qp_quants, quantize_common.hpp; weights the sub-blocks' weight sums) instead of scaling
// them to the largest, and from there on are the reference encoders (kquant_search.hpp). Without
// weights ggml calls the reference quantizers, and so do we.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "kquant_search.hpp"

namespace ck::kernels::scalar::kquant {
namespace {

// The sub-block fit of Q2_K (16 of 16), Q4_K and Q5_K (8 of 32): importance weights, their sum
// per sub-block into sw, and ggml's make_qkx3_quants (= our make_qkx2_quants) for the codes,
// scale and min.
template <int count, int size>
void fit_weighted_sub_blocks(const float* x, const float* qw, float sigma2, int nmax, u8* L,
                             float* scales, float* mins, float* sw) {
    float weights[size];
    for (int j = 0; j < count; ++j) {
        const float* const xs = x + size * j;
        sw[j] = importance_weights(xs, qw + size * j, sigma2, size, weights);
        scales[j] = make_qkx2_quants(size, nmax, xs, weights, L + size * j, mins[j], -0.9f, 0.05f,
                                     36, false);
    }
}

// Q2_K: 4-bit scale and min codes packed per sub-block (scale low, min high).
void weighted_block_q2_K(const float* x, const float* qw, std::byte* out) {
    u8 b[84];
    u8 L[qk_k];
    float scales[16], mins[16], sw[16];
    const float sigma2 = sum_of_squares(x, qk_k) / qk_k;
    fit_weighted_sub_blocks<16, 16>(x, qw, sigma2, 3, L, scales, mins, sw);
    u8 scale_codes[16], min_codes[16];
    store_f16(b + 80, make_qp_quants(16, 15, scales, scale_codes, sw));
    store_f16(b + 82, make_qp_quants(16, 15, mins, min_codes, sw));
    for (int j = 0; j < 16; ++j) b[j] = static_cast<u8>(scale_codes[j] | (min_codes[j] << 4));
    encode_q2_K_codes(x, b, L);
    std::memcpy(out, b, sizeof b);
}

// Q3_K: symmetric codes per sub-block (make_qx_quants under the importance weights), and the 16
// scales quantized the same way, weighted by each sub-block's weight sum, to 6-bit codes.
void weighted_block_q3_K(const float* x, const float* qw, std::byte* out) {
    u8 b[110] = {};
    u8 L[qk_k];
    float scales[16], sw[16];
    const float sigma2 = 2 * sum_of_squares(x, qk_k) / qk_k;
    float weights[16];
    for (int j = 0; j < 16; ++j) {
        sw[j] = importance_weights(x + 16 * j, qw + 16 * j, sigma2, 16, weights);
        scales[j] = make_qx_quants(16, 4, x + 16 * j, weights, L + 16 * j);
    }
    u8 scale_codes[16];
    store_f16(b + 108, make_qx_quants(16, 32, scales, sw, scale_codes));
    for (int j = 0; j < 16; ++j) pack_q3_K_scale(b + 96, j, scale_codes[j]);
    encode_q3_K_codes(x, b, L);
    std::memcpy(out, b, sizeof b);
}

// Q4_K / Q5_K: the 8 scales and 8 mins each quantized to 6-bit codes by make_qp_quants. Q5_K
// caps the codes at 63, Q4_K stores them as they come (ggml's difference, kept).
template <int bytes, int nmax, void (*encode_codes)(const float*, u8*, u8*)>
void weighted_block_k4(const float* x, const float* qw, std::byte* out) {
    u8 b[bytes];
    u8 L[qk_k];
    float scales[8], mins[8], sw[8];
    const float sigma2 = 2 * sum_of_squares(x, qk_k) / qk_k;
    fit_weighted_sub_blocks<8, 32>(x, qw, sigma2, nmax, L, scales, mins, sw);
    u8 scale_codes[8], min_codes[8];
    store_f16(b, make_qp_quants(8, 63, scales, scale_codes, sw));
    store_f16(b + 2, make_qp_quants(8, 63, mins, min_codes, sw));
    if constexpr (nmax == 31) {
        for (int j = 0; j < 8; ++j) {
            scale_codes[j] = std::min<u8>(63, scale_codes[j]);
            min_codes[j] = std::min<u8>(63, min_codes[j]);
        }
    }
    pack_k4_scales(b + 4, scale_codes, min_codes);
    encode_codes(x, b, L);
    std::memcpy(out, b, sizeof b);
}

// The K-quant row: each 256-value block with its 256 weights, or the reference quantizer when
// there are none.
template <void (*weighted_block)(const float*, const float*, std::byte*),
          void (*reference_row)(const float*, std::byte*, std::size_t), std::size_t bytes>
void weighted_kquant_row(const float* x, std::byte* out, std::size_t n, const float* weights) {
    if (weights == nullptr) {
        reference_row(x, out, n);
        return;
    }
    for (std::size_t i = 0; i < n / qk_k; ++i)
        weighted_block(x + qk_k * i, weights + qk_k * i, out + bytes * i);
}

// ---------------------------------------------------------------------------------------------
// Q4_0, Q4_1, Q5_0, Q5_1: one search per 32-value block, sigma2 the mean square of the row.

// The block's codes into L and its f16 scale (and min) at b: symmetric codes offset by nmax
// (make_qx_quants) for Q4_0 / Q5_0, codes with a min (make_qkx3_quants) for Q4_1 / Q5_1.
template <int nmax, bool with_min>
void fit_legacy_block(const float* x, const float* qw, float sigma2, u8* b, u8* L) {
    float weights[32];
    importance_weights(x, qw, sigma2, 32, weights);
    if constexpr (with_min) {
        float the_min;
        store_f16(b, make_qkx2_quants(32, nmax, x, weights, L, the_min, -0.9f, 0.05f, 36, false));
        store_f16(b + 2, -the_min);
    } else {
        store_f16(b, make_qx_quants(32, nmax, x, weights, L));
    }
}

// The codes after the block's f16 fields: for Q4_0 / Q4_1 the 4-bit codes (code j low, j + 16
// high), for Q5_0 / Q5_1 first the fifth bits (bit j of a little-endian u32 for code j), then
// the low 4 bits the same way.
template <bool five_bits>
void pack_legacy_codes(const u8* L, u8* codes) {
    u8* const qs = five_bits ? codes + 4 : codes;
    std::uint32_t high = 0;
    for (int j = 0; j < 16; ++j) {
        qs[j] = static_cast<u8>((L[j] & 0xF) | ((L[j + 16] & 0xF) << 4));
        high |= static_cast<std::uint32_t>((L[j] >> 4) & 1) << j;
        high |= static_cast<std::uint32_t>((L[j + 16] >> 4) & 1) << (j + 16);
    }
    if constexpr (five_bits) {
        for (int k = 0; k < 4; ++k) codes[k] = static_cast<u8>(high >> (8 * k));
    }
}

// Q4_0 (18 bytes: d, qs), Q4_1 (20: d, m, qs), Q5_0 (22: d, qh, qs), Q5_1 (24: d, m, qh, qs).
constexpr std::size_t legacy_block_bytes(int nmax, bool with_min) {
    return (with_min ? 4 : 2) + (nmax > 15 ? 4 : 0) + 16;
}

template <int nmax, bool with_min>
void weighted_legacy_block(const float* x, const float* qw, float sigma2, std::byte* out) {
    constexpr bool five_bits = nmax > 15;
    constexpr int scale_bytes = with_min ? 4 : 2;
    u8 b[legacy_block_bytes(nmax, with_min)];
    u8 L[32];
    fit_legacy_block<nmax, with_min>(x, qw, sigma2, b, L);
    pack_legacy_codes<five_bits>(L, b + scale_bytes);
    std::memcpy(out, b, sizeof b);
}

template <int nmax, bool with_min, void (*reference_row)(const float*, std::byte*, std::size_t)>
void weighted_legacy_row(const float* x, std::byte* out, std::size_t n, const float* weights) {
    if (weights == nullptr) {
        reference_row(x, out, n);
        return;
    }
    const float sigma2 = sum_of_squares(x, n) / static_cast<float>(n);
    constexpr std::size_t bytes = legacy_block_bytes(nmax, with_min);
    for (std::size_t i = 0; i < n / 32; ++i)
        weighted_legacy_block<nmax, with_min>(x + 32 * i, weights + 32 * i, sigma2,
                                              out + bytes * i);
}

}  // namespace
}  // namespace ck::kernels::scalar::kquant

namespace ck::kernels::scalar {

WeightedQuantizeRowFn weighted_kquant_or_legacy(std::uint32_t type) {
    using namespace kquant;
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::q2_k:
            return weighted_kquant_row<weighted_block_q2_K, quantize_row_q2_K, 84>;
        case GgmlType::q3_k:
            return weighted_kquant_row<weighted_block_q3_K, quantize_row_q3_K, 110>;
        case GgmlType::q4_k:
            return weighted_kquant_row<weighted_block_k4<144, 15, encode_q4_K_codes>,
                                       quantize_row_q4_K, 144>;
        case GgmlType::q5_k:
            return weighted_kquant_row<weighted_block_k4<176, 31, encode_q5_K_codes>,
                                       quantize_row_q5_K, 176>;
        case GgmlType::q6_k:
            return weighted_kquant_row<quantize_block_q6_K, quantize_row_q6_K, 210>;
        case GgmlType::q4_0:
            return weighted_legacy_row<8, false, quantize_row_q4_0>;
        case GgmlType::q4_1:
            return weighted_legacy_row<15, true, quantize_row_q4_1>;
        case GgmlType::q5_0:
            return weighted_legacy_row<16, false, quantize_row_q5_0>;
        case GgmlType::q5_1:
            return weighted_legacy_row<31, true, quantize_row_q5_1>;
        default:
            return nullptr;
    }
}

}  // namespace ck::kernels::scalar
