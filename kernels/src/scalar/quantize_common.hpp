// Helpers the scalar quantizers share with ggml's ggml-quants.c, kept to its exact float
// operations (the library is built with -ffp-contract=off; a*b*c is (a*b)*c as in C).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace ck::kernels::scalar {

// Below this largest magnitude a group counts as all zero (ggml's GROUP_MAX_EPS).
inline constexpr float group_max_eps = 1e-15f;

// ggml's nearest_int: adding 1.5 * 2^23 leaves round-to-nearest-even(v) in the low mantissa
// bits (for |v| < 2^22). Kept as the bit trick, not lrintf, so that out-of-range and
// non-finite inputs give ggml's (meaningless but deterministic) codes too.
inline int nearest_int(float v) {
    const float biased = v + 12582912.0f;
    return static_cast<int>(std::bit_cast<std::uint32_t>(biased) & 0x007fffffu) - 0x00400000;
}

// ggml's MAX(a, b) for floats: b unless a is larger, so a NaN in b wins, as in ggml (std::max
// would keep a).
inline float ggml_max(float a, float b) {
    return a > b ? a : b;
}

// ggml's make_qp_quants: codes L in [0, nmax] for n values x >= 0 (a scale without a min),
// minimising the weighted squared error. Tries the grids nmax / max stretched by -0.4..+0.4
// steps, then up to five rounds of moving single codes while that raises sumlx^2 / suml2.
// Returns the least-squares scale of the final codes. The codes are bytes as in ggml: a
// negative x wraps when stored, and the wrapped value is what later rounds read back.
inline float make_qp_quants(int n, int nmax, const float* x, std::uint8_t* L, const float* w) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = ggml_max(max, x[i]);
    if (max < group_max_eps) {
        std::fill(L, L + n, std::uint8_t{0});
        return 0.f;
    }
    float iscale = static_cast<float>(nmax) / max;
    for (int i = 0; i < n; ++i) L[i] = static_cast<std::uint8_t>(nearest_int(iscale * x[i]));
    const float first_scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - first_scale * static_cast<float>(L[i]);
        best_mse += w[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * static_cast<float>(is) + static_cast<float>(nmax)) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::min(nmax, nearest_int(iscale_is * x[i]));
            const float diff = x[i] - scale_is * static_cast<float>(l);
            mse += w[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::min(nmax, nearest_int(iscale * x[i]));
        L[i] = static_cast<std::uint8_t>(l);
        sumlx += w[i] * x[i] * static_cast<float>(l);
        suml2 += w[i] * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float li = L[i];
            float slx = sumlx - w[i] * x[i] * li;
            float sl2 = suml2 - w[i] * li * li;
            if (!(slx > 0 && sl2 > 0)) continue;
            const int new_l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
            if (new_l == L[i]) continue;
            const auto new_lf = static_cast<float>(new_l);
            slx += w[i] * x[i] * new_lf;
            sl2 += w[i] * new_lf * new_lf;
            if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = static_cast<std::uint8_t>(new_l);
                sumlx = slx;
                suml2 = sl2;
                ++n_changed;
            }
        }
        if (!n_changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// The magnitudes of 8 values and their sign bits (bit i: value i is negative), by the test of
// ggml's grid quantizers: -0 counts as positive (and stays -0), NaN as negative. Without
// branches: the signs of real weights are random.
inline std::uint8_t split_signs_8(const float* x, float* magnitudes) {
    unsigned signs = 0;
    for (int i = 0; i < 8; ++i) {
        const bool negative = !(x[i] >= 0);
        magnitudes[i] = negative ? -x[i] : x[i];
        signs |= unsigned{negative} << i;
    }
    return static_cast<std::uint8_t>(signs);
}

}  // namespace ck::kernels::scalar
