// F32 -> Q2_K ... Q6_K exactly as ggml's reference quantizers (no importance matrix).
//
// Each follows ggml's quantize_row_qN_K_ref (ggml/src/ggml-quants.c): the same search for the
// sub-block scales (make_qkx2_quants for the types with a min, make_q3_quants and
// make_qx_quants for the symmetric ones), the same f32 operations in the same order (every
// sum is accumulated element by element, left to right; a*b*c is (a*b)*c), the same
// round-to-nearest trick (nearest_int) and the same integer truncations when a code is stored
// in a byte. The library is built with -ffp-contract=off, as ggml's reference is built without
// FMA. The super-block scales are stored as f16 and then read back: ggml requantizes every value
// against the f16-rounded scale, not the f32 one, so the round trip matters.
//
// One function computes one 256-value block from its inputs alone (nothing is carried between
// blocks), writing into a local byte array that is copied out at the end. The searches and the
// second half of each encoder (requantize against the stored scales, pack) are shared with the
// weighted quantizers (kquant_search.hpp), and defined here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "block_bytes.hpp"
#include "ck/kernels/quantize.hpp"
#include "kquant_search.hpp"

namespace ck::kernels::scalar::kquant {
namespace {

// The value of largest magnitude among x[0..n) (the first one on ties), or nullopt when every
// value is below ggml's GROUP_MAX_EPS: then the codes are all 0 and the scale is 0.
std::optional<float> signed_extreme(int n, const float* x, u8* L) {
    float max = 0;
    float amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax >= group_max_eps) return max;
    for (int i = 0; i < n; ++i) L[i] = 0;
    return std::nullopt;
}

// Symmetric codes of x on the grid iscale, clamped to [-nmax, nmax - 1], each passed to
// keep(i, code), and the least-squares sums sum(w x l) and sum(w l^2), accumulated in ggml's
// order.
struct GridFit {
    float sumlx = 0, suml2 = 0;
};
template <class Keep>
GridFit fit_symmetric_grid(int n, int nmax, float iscale, const float* x, const float* w,
                           Keep keep) {
    GridFit fit;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        keep(i, l);
        fit.sumlx += w[i] * x[i] * to_f(l);
        fit.suml2 += w[i] * to_f(l) * to_f(l);
    }
    return fit;
}

// x^2 for each of n values, into squares (returned): the weights ggml's symmetric searches use
// without an importance matrix.
const float* square_weights(int n, const float* x, float* squares) {
    for (int i = 0; i < n; ++i) squares[i] = x[i] * x[i];
    return squares;
}

// ggml's make_q3_quants with do_rmse: symmetric codes in [-nmax, nmax - 1] (returned in L
// offset by nmax) for n values, weights x^2. Starts from the grid through the value of largest
// magnitude, then moves single codes while that raises sumlx^2 / suml2 (up to 5 sweeps). An
// all-zero group leaves L = 0, not nmax (ggml's quirk, kept).
float make_q3_quants(int n, int nmax, const float* x, u8* L) {
    const std::optional<float> extreme = signed_extreme(n, x, L);
    if (!extreme) return 0.0f;
    float squares[16];
    const float* const w = square_weights(n, x, squares);
    int Ls[16];  // signed codes while refining (n <= 16)
    const GridFit start =
        fit_symmetric_grid(n, nmax, to_f(-nmax) / *extreme, x, w, [&](int i, int l) { Ls[i] = l; });
    float sumlx = start.sumlx;
    float suml2 = start.suml2;
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            float slx = sumlx - w[i] * x[i] * to_f(Ls[i]);
            if (slx > 0) {
                float sl2 = suml2 - w[i] * to_f(Ls[i]) * to_f(Ls[i]);
                const int new_l =
                    std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
                if (new_l != Ls[i]) {
                    slx += w[i] * x[i] * to_f(new_l);
                    sl2 += w[i] * to_f(new_l) * to_f(new_l);
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        Ls[i] = new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (n_changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<u8>(Ls[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Packs 2-bit codes as Q2_K/Q3_K store them: per 128 values, byte l of the 32 holds codes l,
// l+32, l+64, l+96 at bits 0, 2, 4, 6.
void pack_2bit(const u8* L, u8* qs) {
    for (int j = 0; j < qk_k; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] = static_cast<u8>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
                                            (L[j + l + 96] << 6));
        }
    }
}

// Q4_K / Q5_K: the codes in [0, nmax] of the 8 sub-blocks of 32 against the stored d, dmin
// (b[0..4)) and 6-bit scales and mins (b[4..16)).
void requantize_k4(const float* x, const u8* b, u8* L, int nmax) {
    const float d = load_f16(b);
    const float dmin = load_f16(b + 2);
    for (int j = 0; j < 8; ++j) {
        int s, m;
        scale_min_k4(j, b + 4, s, m);  // as the dequantizer reads them back
        const float dl = d * to_f(s);
        if (dl == 0.0f) continue;
        const float ml = dmin * to_f(m);
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearest_int((x[32 * j + ii] + ml) / dl);
            L[32 * j + ii] = static_cast<u8>(std::max(0, std::min(nmax, l)));
        }
    }
}

}  // namespace

// ggml's make_qkx2_quants. Starts from the min/max fit, then tries nstep + 1 stretched grids
// iscale = (nmax + rmin + rdelta * is) / (max - min), fitting scale and min to each grid by
// weighted least squares and keeping the best. The caller's L keeps the winning codes.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, u8* L, float& the_min,
                       float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        the_min = -min;
        return 0.0f;
    }
    float iscale = to_f(nmax) / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<u8>(std::max(0, std::min(nmax, l)));
        float diff = scale * to_f(L[i]) + min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        best_error += weights[i] * diff;
    }
    if (nstep < 1) {
        the_min = -min;
        return scale;
    }
    u8 Laux[32];
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * to_f(is) + to_f(nmax)) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
            Laux[i] = static_cast<u8>(l);
            const float w = weights[i];
            const float fl = to_f(l);
            sum_l += w * fl;
            sum_l2 += w * fl * fl;
            sum_xl += w * fl * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                // The min is clamped to 0: refit the scale alone.
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * to_f(Laux[i]) + this_min - x[i];
                diff = use_mad ? std::fabs(diff) : diff * diff;
                cur_error += weights[i] * diff;
            }
            if (cur_error < best_error) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    the_min = -min;
    return scale;
}

float make_qx_quants(int n, int nmax, const float* x, const float* weights, u8* L) {
    // Fits the scale by weighted least squares on the grid through the value of largest
    // magnitude, then on 18 grids iscale = -(nmax + 0.1 is) / max (is = -9..9, not 0), keeping
    // the one with the largest sumlx^2 / suml2.
    const std::optional<float> extreme = signed_extreme(n, x, L);
    if (!extreme) return 0.0f;
    float squares[32];
    const float* const w = weights ? weights : square_weights(n, x, squares);
    const float max = *extreme;
    const GridFit start = fit_symmetric_grid(
        n, nmax, to_f(-nmax) / max, x, w, [&](int i, int l) { L[i] = static_cast<u8>(l + nmax); });
    float scale = start.suml2 != 0.0f ? start.sumlx / start.suml2 : 0.0f;
    float best = scale * start.sumlx;
    int Lt[32];  // this grid's codes (n <= 32)
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const float iscale = -(to_f(nmax) + 0.1f * to_f(is)) / max;
        const GridFit fit =
            fit_symmetric_grid(n, nmax, iscale, x, w, [&](int i, int l) { Lt[i] = l; });
        if (fit.suml2 > 0 && fit.sumlx * fit.sumlx > best * fit.suml2) {
            for (int i = 0; i < n; ++i) L[i] = static_cast<u8>(Lt[i] + nmax);
            scale = fit.sumlx / fit.suml2;
            best = scale * fit.sumlx;
        }
    }
    return scale;
}

// Q2_K: scales[16] at b (low nibble scale, high nibble min), qs[64] at b + 16, d, dmin at 80.
void encode_q2_K_codes(const float* x, u8* b, u8* L) {
    const float d = load_f16(b + 80);
    const float dmin = load_f16(b + 82);
    for (int j = 0; j < 16; ++j) {
        const float dl = d * to_f(b[j] & 0xF);
        if (dl == 0.0f) continue;
        const float ml = dmin * to_f(b[j] >> 4);
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int((x[16 * j + ii] + ml) / dl);
            L[16 * j + ii] = static_cast<u8>(std::max(0, std::min(3, l)));
        }
    }
    pack_2bit(L, b + 16);
}

// Q3_K: hmask[32], qs[64] at 32, scales[12] at 96, d at 108. Codes 0..7 (value (code - 4) *
// scale): the low 2 bits in qs, the high bit in hmask.
void encode_q3_K_codes(const float* x, u8* b, u8* L) {
    u8* const hmask = b;
    const u8* const sc = b + 96;
    const float d_all = load_f16(b + 108);
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? (sc[j] & 0xF) : (sc[j - 8] >> 4);
        const int s = (low | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
        const float d = d_all * to_f(s);
        if (d == 0.0f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int(x[16 * j + ii] / d);
            L[16 * j + ii] = static_cast<u8>(std::max(-4, std::min(3, l)) + 4);
        }
    }
    // High bits: value j goes to hmask[j % 32], bit j / 32.
    std::memset(hmask, 0, 32);
    for (int j = 0; j < qk_k; ++j) {
        if (L[j] > 3) {
            hmask[j % 32] = static_cast<u8>(hmask[j % 32] | (1u << (j / 32)));
            L[j] = static_cast<u8>(L[j] - 4);
        }
    }
    pack_2bit(L, b + 32);
}

// The 16 signed 6-bit scales (+32): low nibbles in bytes 0-7 (scale j and j+8 share byte
// j%8), high 2 bits in bytes 8-11.
void pack_q3_K_scale(u8* sc, int j, int code) {
    if (j < 8) {
        sc[j] = static_cast<u8>(code & 0xF);
    } else {
        sc[j - 8] = static_cast<u8>(sc[j - 8] | ((code & 0xF) << 4));
    }
    sc[j % 4 + 8] = static_cast<u8>(sc[j % 4 + 8] | ((code >> 4) << (2 * (j / 4))));
}

void pack_k4_scales(u8* sc, const u8* scale_codes, const u8* min_codes) {
    for (int j = 0; j < 8; ++j) {
        const u8 ls = scale_codes[j];
        const u8 lm = min_codes[j];
        if (j < 4) {
            sc[j] = ls;
            sc[j + 4] = lm;
        } else {
            sc[j + 4] = static_cast<u8>((ls & 0xF) | ((lm & 0xF) << 4));
            sc[j - 4] = static_cast<u8>(sc[j - 4] | ((ls >> 4) << 6));
            sc[j] = static_cast<u8>(sc[j] | ((lm >> 4) << 6));
        }
    }
}

// Q4_K (144 bytes): d, dmin, scales[12], qs[128]. Each 32 bytes of qs hold sub-block 2g in the
// low nibbles and 2g+1 in the high nibbles.
void encode_q4_K_codes(const float* x, u8* b, u8* L) {
    requantize_k4(x, b, L, 15);
    u8* q = b + 16;
    for (int j = 0; j < qk_k; j += 64, q += 32) {
        for (int l = 0; l < 32; ++l) q[l] = static_cast<u8>(L[j + l] | (L[j + l + 32] << 4));
    }
}

// Q5_K (176 bytes): d, dmin, scales[12], qh[32], qs[128]. As Q4_K for the low 4 bits; the 5th
// bit of value n + j (n = 64 k) goes to qh[j] bit 2k, of n + j + 32 to bit 2k + 1.
void encode_q5_K_codes(const float* x, u8* b, u8* L) {
    requantize_k4(x, b, L, 31);
    u8* const qh = b + 16;
    std::memset(qh, 0, 32);
    u8* ql = b + 48;
    unsigned m1 = 1, m2 = 2;
    for (int n = 0; n < qk_k; n += 64, ql += 32, m1 <<= 2, m2 <<= 2) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j];
            if (l1 > 15) {
                l1 -= 16;
                qh[j] = static_cast<u8>(qh[j] | m1);
            }
            int l2 = L[n + j + 32];
            if (l2 > 15) {
                l2 -= 16;
                qh[j] = static_cast<u8>(qh[j] | m2);
            }
            ql[j] = static_cast<u8>(l1 | (l2 << 4));
        }
    }
}

// Q6_K (210 bytes): ql[128], qh[64], scales[16] (int8), d. Codes 0..63 (value (code - 32) *
// d * scale). Per 128 values: ql[l] holds codes l and l+64 (low, high nibble), ql[l+32] codes
// l+32 and l+96; qh[l] their top 2 bits at bits 0, 2, 4, 6.
void quantize_block_q6_K(const float* x, const float* quant_weights, std::byte* out) {
    u8 b[210];
    u8 L[qk_k];
    float scales[16];

    // The scale of largest magnitude, with its sign, maps to -128.
    float max_scale = 0;
    float max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        const float* const w = quant_weights ? quant_weights + 16 * ib : nullptr;
        const float scale = make_qx_quants(16, 32, x + 16 * ib, w, L + 16 * ib);
        scales[ib] = scale;
        const float abs_scale = std::fabs(scale);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }
    if (max_abs_scale < group_max_eps) {
        // An all-zero block (ggml writes every byte 0, d included).
        std::memset(out, 0, sizeof b);
        return;
    }

    const float iscale = -128.0f / max_scale;
    const float d = store_f16(b + 208, 1 / iscale);
    auto* const sc = b + 192;
    for (int ib = 0; ib < 16; ++ib) {
        const int s = std::min(127, nearest_int(iscale * scales[ib]));
        sc[ib] = static_cast<u8>(static_cast<std::int8_t>(s));
    }

    // Requantize against the stored scales; a sub-block whose scale is 0 keeps the codes
    // make_qx_quants chose.
    for (int j = 0; j < 16; ++j) {
        const float dl = d * to_f(static_cast<std::int8_t>(sc[j]));
        if (dl == 0.0f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int(x[16 * j + ii] / dl);
            L[16 * j + ii] = static_cast<u8>(std::max(-32, std::min(31, l)) + 32);
        }
    }

    u8* ql = b;
    u8* qh = b + 128;
    for (int j = 0; j < qk_k; j += 128, ql += 64, qh += 32) {
        for (int l = 0; l < 32; ++l) {
            const u8* c = L + j + l;
            ql[l] = static_cast<u8>((c[0] & 0xF) | ((c[64] & 0xF) << 4));
            ql[l + 32] = static_cast<u8>((c[32] & 0xF) | ((c[96] & 0xF) << 4));
            qh[l] = static_cast<u8>((c[0] >> 4) | ((c[32] >> 4) << 2) | ((c[64] >> 4) << 4) |
                                    ((c[96] >> 4) << 6));
        }
    }
    std::memcpy(out, b, sizeof b);
}

namespace {

// The make_qkx2_quants search of Q2_K (16 sub-blocks of 16, weights |x|) and of Q4_K / Q5_K (8
// sub-blocks of 32, weights rms + |x|).
struct Qkx2Search {
    int nmax;
    float rmin, rdelta;
    int nstep;
    bool use_mad;
};

// Fits `count` sub-blocks of `size` values, weights from weigh(values, weights): each one's
// codes into L and its scale and min (both >= 0, the min subtracted) into scales / mins.
// Returns the largest scale and the largest min, which set the range of the stored ones.
struct LargestScaleMin {
    float scale = 0, min = 0;
};
template <int count, int size, class Weigh>
LargestScaleMin fit_sub_blocks(const float* x, const Qkx2Search& search, Weigh weigh, u8* L,
                               float* scales, float* mins) {
    LargestScaleMin largest;
    float weights[size];
    for (int j = 0; j < count; ++j) {
        const float* xs = x + size * j;
        weigh(xs, weights);
        scales[j] = make_qkx2_quants(size, search.nmax, xs, weights, L + size * j, mins[j],
                                     search.rmin, search.rdelta, search.nstep, search.use_mad);
        if (scales[j] > largest.scale) largest.scale = scales[j];
        if (mins[j] > largest.min) largest.min = mins[j];
    }
    return largest;
}

// Q2_K (84 bytes), the layout at encode_q2_K_codes.
void quantize_block_q2_K(const float* x, std::byte* out) {
    u8 b[84];
    u8* const sc = b;
    u8 L[qk_k];
    float mins[16];
    float scales[16];
    auto abs_weights = [](const float* xs, float* weights) {
        for (int l = 0; l < 16; ++l) weights[l] = std::fabs(xs[l]);
    };
    // Scales and mins are always >= 0 (the min is subtracted): the largest sets the range.
    const LargestScaleMin largest =
        fit_sub_blocks<16, 16>(x, {3, -0.5f, 0.1f, 15, true}, abs_weights, L, scales, mins);

    if (largest.scale > 0) {
        const float iscale = 15.0f / largest.scale;
        for (int j = 0; j < 16; ++j) sc[j] = static_cast<u8>(nearest_int(iscale * scales[j]));
        store_f16(b + 80, largest.scale / 15.0f);
    } else {
        for (int j = 0; j < 16; ++j) sc[j] = 0;
        store_f16(b + 80, 0.0f);
    }
    if (largest.min > 0) {
        const float iscale = 15.0f / largest.min;
        for (int j = 0; j < 16; ++j)
            sc[j] = static_cast<u8>(sc[j] | (nearest_int(iscale * mins[j]) << 4));
        store_f16(b + 82, largest.min / 15.0f);
    } else {
        store_f16(b + 82, 0.0f);
    }
    encode_q2_K_codes(x, b, L);
    std::memcpy(out, b, sizeof b);
}

// Q3_K (110 bytes), the layout at encode_q3_K_codes.
void quantize_block_q3_K(const float* x, std::byte* out) {
    u8 b[110] = {};
    u8* const sc = b + 96;
    u8 L[qk_k];
    float scales[16];

    // The scale of largest magnitude, with its sign, maps to -32.
    float max_scale = 0;
    float amax = 0;
    for (int j = 0; j < 16; ++j) {
        scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
        const float scale = std::fabs(scales[j]);
        if (scale > amax) {
            amax = scale;
            max_scale = scales[j];
        }
    }

    if (max_scale != 0.0f) {
        const float iscale = -32.0f / max_scale;
        for (int j = 0; j < 16; ++j) {
            // ggml stores nearest_int's result in an int8_t before clamping.
            const auto l8 = static_cast<std::int8_t>(nearest_int(iscale * scales[j]));
            pack_q3_K_scale(sc, j, std::max(-32, std::min(31, static_cast<int>(l8))) + 32);
        }
        store_f16(b + 108, 1 / iscale);
    } else {
        store_f16(b + 108, 0.0f);
    }
    encode_q3_K_codes(x, b, L);
    std::memcpy(out, b, sizeof b);
}

// Q4_K and Q5_K share the scale search: 8 sub-blocks of 32 with weights av_x + |x| (av_x the
// sub-block's rms), make_qkx2_quants, then 6-bit scales and mins against d = max_scale / 63 and
// dmin = max_min / 63. Writes d, dmin and scales[12] at b[0..16) and the codes to L.
void q45_K_scales(const float* x, u8* b, u8* L, const Qkx2Search& search) {
    float mins[8];
    float scales[8];
    auto rms_weights = [](const float* xs, float* weights) {
        const float av_x = std::sqrt(sum_of_squares(xs, 32) / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    };
    const LargestScaleMin largest = fit_sub_blocks<8, 32>(x, search, rms_weights, L, scales, mins);

    const float inv_scale = largest.scale > 0 ? 63.0f / largest.scale : 0.0f;
    const float inv_min = largest.min > 0 ? 63.0f / largest.min : 0.0f;
    u8 scale_codes[8];
    u8 min_codes[8];
    for (int j = 0; j < 8; ++j) {
        // ggml truncates to uint8_t first, then caps at 63.
        scale_codes[j] = std::min<u8>(63, static_cast<u8>(nearest_int(inv_scale * scales[j])));
        min_codes[j] = std::min<u8>(63, static_cast<u8>(nearest_int(inv_min * mins[j])));
    }
    pack_k4_scales(b + 4, scale_codes, min_codes);
    store_f16(b, largest.scale / 63.0f);
    store_f16(b + 2, largest.min / 63.0f);
}

// Q4_K (144 bytes) and Q5_K (176 bytes): the scale search ggml's reference gives each (Q4_K 21
// grids from nmax - 1, Q5_K 16 from nmax - 0.5), then the codes.
template <int bytes, int nmax, void (*encode_codes)(const float*, u8*, u8*)>
void quantize_block_k4(const float* x, std::byte* out) {
    constexpr Qkx2Search search = nmax == 15 ? Qkx2Search{15, -1.0f, 0.1f, 20, false}
                                             : Qkx2Search{31, -0.5f, 0.1f, 15, false};
    u8 b[bytes];
    u8 L[qk_k];
    q45_K_scales(x, b, L, search);
    encode_codes(x, b, L);
    std::memcpy(out, b, sizeof b);
}

void quantize_block_q4_K(const float* x, std::byte* out) {
    quantize_block_k4<144, 15, encode_q4_K_codes>(x, out);
}

void quantize_block_q5_K(const float* x, std::byte* out) {
    quantize_block_k4<176, 31, encode_q5_K_codes>(x, out);
}

void reference_block_q6_K(const float* x, std::byte* out) {
    quantize_block_q6_K(x, nullptr, out);
}

template <void (*block_fn)(const float*, std::byte*), std::size_t block_bytes>
void quantize_row(const float* x, std::byte* out, std::size_t n) {
    for (std::size_t i = 0; i < n / qk_k; ++i, x += qk_k, out += block_bytes) block_fn(x, out);
}

}  // namespace
}  // namespace ck::kernels::scalar::kquant

namespace ck::kernels {

void quantize_row_q2_K(const float* x, std::byte* out, std::size_t n) {
    scalar::kquant::quantize_row<scalar::kquant::quantize_block_q2_K, 84>(x, out, n);
}

void quantize_row_q3_K(const float* x, std::byte* out, std::size_t n) {
    scalar::kquant::quantize_row<scalar::kquant::quantize_block_q3_K, 110>(x, out, n);
}

void quantize_row_q4_K(const float* x, std::byte* out, std::size_t n) {
    scalar::kquant::quantize_row<scalar::kquant::quantize_block_q4_K, 144>(x, out, n);
}

void quantize_row_q5_K(const float* x, std::byte* out, std::size_t n) {
    scalar::kquant::quantize_row<scalar::kquant::quantize_block_q5_K, 176>(x, out, n);
}

void quantize_row_q6_K(const float* x, std::byte* out, std::size_t n) {
    scalar::kquant::quantize_row<scalar::kquant::reference_block_q6_K, 210>(x, out, n);
}

}  // namespace ck::kernels
