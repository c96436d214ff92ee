// The scale search of ggml's quantize_row_iq4_nl_impl for one 32-value block, shared by the
// IQ4_NL quantizer without an importance matrix (quantize_legacy.cpp) and the weighted IQ4_NL
// and IQ4_XS ones (quantize_iq3_iq4.cpp): the same f32 operations in ggml's order.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "block_bytes.hpp"
#include "codebooks.hpp"
#include "quantize_common.hpp"

namespace ck::kernels::scalar {

inline constexpr std::size_t iq4nl_block = 32;

// The index of the code book value nearest x; on an exact midpoint the larger one. ggml's
// best_index_int8 either compares x - v[i-1] < v[i] - x after a bisection (older copies) or
// 2x >= v[i-1] + v[i] (newer); near a midpoint both differences are exact in f32 (|x| >= 4.5
// there, the half gaps <= 12), so the two agree on every non-NaN x. We use the doubled form:
// x + x is exact and the sums of the integral values are exact in f32.
inline int best_index_iq4nl(float x) {
    const float x2 = x + x;
    int idx = 0;
    for (int step = 8; step > 0; step >>= 1) {
        const int j = idx + step;
        idx = x2 >= iq4nl_values[j - 1] + iq4nl_values[j] ? j : idx;
    }
    return idx;
}

// The codes of count values at inverse scale id.
inline void iq4nl_encode(const float* x, std::size_t count, float id, std::uint8_t* codes) {
    for (std::size_t j = 0; j < count; ++j)
        codes[j] = static_cast<std::uint8_t>(best_index_iq4nl(id * x[j]));
}

// Weighted fit of one block at inverse scale id: the sums sum(w*q*x), sum(w*q*q) of the codes
// that scale gives, accumulated in ggml's order.
inline void iq4nl_fit(const float* x, const float* w, float id, float& sumqx, float& sumq2) {
    sumqx = 0.0f;
    sumq2 = 0.0f;
    for (std::size_t j = 0; j < iq4nl_block; ++j) {
        const float q = iq4nl_values[best_index_iq4nl(id * x[j])];
        sumqx += w[j] * q * x[j];
        sumq2 += w[j] * q * q;
    }
}

// The scale of one block given each value's importance (ntry = 7 in ggml): 0 for a block whose
// largest magnitude is below group_max_eps.
inline float iq4nl_block_scale(const float* x, const float* weight) {
    constexpr int ntry = 7;
    float amax = 0.0f, max = 0.0f;
    for (std::size_t j = 0; j < iq4nl_block; ++j) {
        const float ax = std::fabs(x[j]);
        if (ax > amax) {
            amax = ax;
            max = x[j];
        }
    }
    if (amax < group_max_eps) return 0.0f;
    // First guess: the extreme value onto the table's end -127 (so d has max's sign flipped),
    // then the least-squares scale for the codes that gives.
    float d = -max / iq4nl_values[0];
    float sumqx, sumq2;
    iq4nl_fit(x, weight, 1.0f / d, sumqx, sumq2);
    d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    // Then 15 more inverse scales, (k - 127) / max for k = -7..7, keeping whichever
    // least-squares fit explains the most (sumqx^2 / sumq2, compared cross-multiplied).
    for (int itry = -ntry; itry <= ntry; ++itry) {
        const float id = (static_cast<float>(itry) + iq4nl_values[0]) / max;
        iq4nl_fit(x, weight, id, sumqx, sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// 32 codes as 16 bytes: code j in the low nibble of byte j, code j + 16 in its high nibble.
inline void iq4nl_pack(const std::uint8_t* codes, std::byte* out) {
    std::uint8_t qs[iq4nl_block / 2];
    for (std::size_t j = 0; j < iq4nl_block / 2; ++j)
        qs[j] = static_cast<std::uint8_t>(codes[j] | (codes[j + iq4nl_block / 2] << 4));
    std::memcpy(out, qs, sizeof qs);
}

// One IQ4_NL block (f16 d, then the 16 code bytes) as ggml's quantize_iq4_nl writes it. The f16
// scale is stored, but the codes come from the f32 one. A block below the epsilon (all zero)
// gets scale 0 and so every code is the index of the value nearest 0 (8, the value 1): bytes
// 0x88.
inline void iq4nl_quantize_block(const float* x, const float* weight, std::byte* out) {
    const float scale = iq4nl_block_scale(x, weight);
    store_half(out, scale);
    std::uint8_t codes[iq4nl_block];
    iq4nl_encode(x, iq4nl_block, inverse_scale(scale), codes);
    iq4nl_pack(codes, out + 2);
}

}  // namespace ck::kernels::scalar
