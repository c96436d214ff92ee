// One block per SIMD lane: the registers, block searches and block encoders that the K-quant
// and IQ4 quantizers without importance weights (quantize_kquants_lanes.inc) and with them
// (quantize_weighted_lanes.inc) share. Each lane gives the scalar code's bits: the scalar
// functions (src/scalar/quantize_kquants.cpp, kquant_search.hpp, quantize_common.hpp,
// iq4nl_search.hpp) are the specification, read them first.
//
// Included only by the ISA units, which set CK_SIMD_FLOAT_LANES (simd_width.hpp) and are
// compiled with their ISA's flags but without -mfma. Everything here has internal linkage, and
// no header with inline functions the baseline code also uses (float_convert.hpp, <algorithm>)
// is included: what the baseline code owns is called out of line (f16_round_trip).
//
// Why the lanes give the scalar code's bits: every step of the per-block algorithm is an IEEE
// single-precision +, -, *, /, sqrt, fabs or comparison, which gives the same result lane-wise
// as in scalar code when the operations keep their order and are never fused (the library is
// built with -ffp-contract=off, and these units without -mfma); nearest_int is the same bit
// trick on the same float. Every data-dependent branch of the scalar code becomes a per-lane
// select, and every lane runs the scalar code's full loop counts: the scalar loops have no
// data-dependent exits except the early returns of all-equal / all-zero groups, whose lanes
// compute garbage that the final select discards, and the refinement sweeps (make_q3_quants,
// make_qp_quants), which stop after the first sweep that changes nothing (there the lanes run
// until every lane has stopped, a stopped lane frozen by a mask). Per-lane state (such as
// make_qkx2_quants' running min, which later grids use) evolves exactly as the scalar variable
// does. Table lookups (IQ4_NL's nearest entry) are the scalar bisection, lane-wise.
//
// The f16 scales round trip through the baseline unit's conversion (f16_round_trip), so they
// are the scalar code's conversion by construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "quantize_simd.hpp"
#include "simd_width.hpp"

namespace ck::kernels {
namespace {

// ---- The unit's registers -----------------------------------------------------------------

typedef float VF __attribute__((vector_size(sizeof(Floats))));
typedef std::int32_t VI __attribute__((vector_size(sizeof(Floats))));

constexpr int lanes = static_cast<int>(sizeof(VF) / sizeof(float));

// Lane-wise IEEE square root (correctly rounded, as the scalar sqrtss / fsqrt).
inline VF vsqrt(VF v) {
#ifdef CK_SIMD_NEON
    float32x4_t half[2];
    std::memcpy(half, &v, sizeof v);
    half[0] = vsqrtq_f32(half[0]);
    half[1] = vsqrtq_f32(half[1]);
    std::memcpy(&v, half, sizeof v);
    return v;
#else
    return reinterpret_cast<VF>(CK_SIMD(sqrt_ps)(reinterpret_cast<Floats>(v)));
#endif
}

// Lane k = t[i[k]] for i[k] in 0..7, a register table lookup (with 16 lanes, the table's lanes
// 8..15 are never read).
inline VF permute8(VF t, VI i) {
#ifdef CK_SIMD_NEON
    return __builtin_shuffle(t, i & 7);  // GCC's generic shuffle: the mask is taken modulo 8
#elif CK_SIMD_FLOAT_LANES == 16
    return reinterpret_cast<VF>(
        _mm512_permutexvar_ps(reinterpret_cast<__m512i>(i), reinterpret_cast<__m512>(t)));
#else
    return reinterpret_cast<VF>(
        _mm256_permutevar8x32_ps(reinterpret_cast<__m256>(t), reinterpret_cast<__m256i>(i)));
#endif
}

constexpr int qk_k = 256;
constexpr float group_max_eps = 1e-15f;

using u8 = std::uint8_t;

inline VF splat(float v) {
    return VF{} + v;
}

inline VI splat_i(std::int32_t v) {
    return VI{} + v;
}

inline VF to_f(VI v) {
    return __builtin_convertvector(v, VF);
}

inline VF vabs(VF v) {
    return reinterpret_cast<VF>(reinterpret_cast<VI>(v) & 0x7fffffff);
}

// ggml's nearest_int, lane-wise: the same addition and the same bit extraction.
inline VI nearest_int(VF v) {
    const VF biased = v + 12582912.0f;
    return (reinterpret_cast<VI>(biased) & 0x007fffff) - 0x00400000;
}

// Lane-wise signed minimum and maximum.
#ifdef CK_SIMD_NEON
inline VI vmin(VI a, VI b) {
    return a < b ? a : b;
}
inline VI vmax(VI a, VI b) {
    return a > b ? a : b;
}
#else
inline VI vmin(VI a, VI b) {
    return reinterpret_cast<VI>(
        CK_SIMD(min_epi32)(reinterpret_cast<Ints>(a), reinterpret_cast<Ints>(b)));
}
inline VI vmax(VI a, VI b) {
    return reinterpret_cast<VI>(
        CK_SIMD(max_epi32)(reinterpret_cast<Ints>(a), reinterpret_cast<Ints>(b)));
}
#endif

inline VI clamp(VI v, std::int32_t lo, std::int32_t hi) {
    return vmax(vmin(v, splat_i(hi)), splat_i(lo));
}

inline VF select(VI mask, VF a, VF b) {
    return mask ? a : b;
}

inline VI select(VI mask, VI a, VI b) {
    return mask ? a : b;
}

// True when some lane of the mask is set.
inline bool any(VI mask) {
    for (int k = 0; k < lanes; ++k)
        if (mask[k] != 0) return true;
    return false;
}

// A scale the block stores as f16: each lane's bits, and the value read back from them (what
// the scalar code computes the codes against).
struct HalfScale {
    VF value;
    std::uint16_t bits[lanes];
};

inline HalfScale to_half(VF v) {
    alignas(sizeof(VF)) float in[lanes];
    alignas(sizeof(VF)) float back[lanes];
    std::memcpy(in, &v, sizeof v);
    HalfScale h;
    f16_round_trip(in, h.bits, back, lanes);
    std::memcpy(&h.value, back, sizeof back);
    return h;
}

// Lane k of xt[i] = x[k * block + i]: the blocks side by side.
template <int block = qk_k>
inline void transpose_in(const float* x, VF* xt) {
    for (int k = 0; k < lanes; ++k) {
        const float* xk = x + static_cast<std::size_t>(k) * block;
        for (int i = 0; i < block; ++i) xt[i][k] = xk[i];
    }
}

// Sum of x[i]^2, left to right in f32 (the scalar sum_of_squares, lane-wise).
template <int n>
inline VF sum_of_squares(const VF* x) {
    VF sum = splat(0.0f);
    for (int i = 0; i < n; ++i) sum += x[i] * x[i];
    return sum;
}

// ---- The searches -------------------------------------------------------------------------

// ggml's make_qkx2_quants, n values per lane (use_mad: absolute instead of squared errors). L
// receives the winning codes (as integers, 0..nmax). See the scalar version for the algorithm.
//
// The scalar code copies each better grid's codes into L. Here each lane remembers the iscale
// and min the winning codes were computed from and recomputes them once at the end: the same
// nearest_int(iscale * (x - min)) of the same floats, so the same codes.
template <int n, bool use_mad = false>
VF make_qkx2_quants(int nmax, const VF* x, const VF* weights, VI* L, VF& the_min, float rmin,
                    float rdelta, int nstep) {
    VF min = x[0];
    VF max = x[0];
    VF sum_w = weights[0];
    VF sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        min = select(x[i] < min, x[i], min);
        max = select(x[i] > max, x[i], max);
        const VF w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    min = select(min > 0.0f, splat(0.0f), min);
    const VI flat = max == min;  // the scalar code returns early on these lanes
    const VF flat_min = min;
    const float fnmax = static_cast<float>(nmax);
    VF iscale = splat(fnmax) / (max - min);
    VF scale = splat(1.0f) / iscale;
    VF best_error = splat(0.0f);
    for (int i = 0; i < n; ++i) {
        const VF fl = to_f(clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
        VF diff = scale * fl + min - x[i];
        diff = use_mad ? vabs(diff) : diff * diff;
        best_error += weights[i] * diff;
    }
    VF L_iscale = iscale;  // the grid L comes from
    VF L_min = min;
    if (nstep >= 1) {
        VF Laux[n];
        for (int is = 0; is <= nstep; ++is) {
            const float num = rmin + rdelta * static_cast<float>(is) + fnmax;
            iscale = splat(num) / (max - min);
            VF sum_l = splat(0.0f), sum_l2 = splat(0.0f), sum_xl = splat(0.0f);
            for (int i = 0; i < n; ++i) {
                const VF fl = to_f(clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
                Laux[i] = fl;
                const VF w = weights[i];
                sum_l += w * fl;
                sum_l2 += w * fl * fl;
                sum_xl += w * fl * x[i];
            }
            const VF D = sum_w * sum_l2 - sum_l * sum_l;
            const VI positive = D > 0.0f;
            VF this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            VF this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            const VI refit = this_min > 0.0f;
            this_min = select(refit, splat(0.0f), this_min);
            this_scale = select(refit, sum_xl / sum_l2, this_scale);
            VF cur_error = splat(0.0f);
            for (int i = 0; i < n; ++i) {
                VF diff = this_scale * Laux[i] + this_min - x[i];
                diff = use_mad ? vabs(diff) : diff * diff;
                cur_error += weights[i] * diff;
            }
            const VI take = positive & (cur_error < best_error);
            L_iscale = select(take, iscale, L_iscale);
            L_min = select(take, min, L_min);
            best_error = select(take, cur_error, best_error);
            scale = select(take, this_scale, scale);
            min = select(take, this_min, min);
        }
    }
    for (int i = 0; i < n; ++i) {
        const VI l = clamp(nearest_int(L_iscale * (x[i] - L_min)), 0, nmax);
        L[i] = select(flat, splat_i(0), l);
    }
    the_min = select(flat, -flat_min, -min);
    return select(flat, splat(0.0f), scale);
}

// The value of largest magnitude (the first on ties) and whether the group counts as all zero
// (below ggml's GROUP_MAX_EPS), the start of the symmetric searches.
template <int n>
inline VF signed_extreme(const VF* x, VI& zero) {
    VF max = splat(0.0f);
    VF amax = splat(0.0f);
    for (int i = 0; i < n; ++i) {
        const VF ax = vabs(x[i]);
        const VI bigger = ax > amax;
        amax = select(bigger, ax, amax);
        max = select(bigger, x[i], max);
    }
    zero = ~(amax >= group_max_eps);
    return max;
}

// ggml's make_qx_quants with rmse_type 1, n values per lane, under the weights w (x^2 when w is
// nullptr, as in the scalar code). L receives the stored codes (signed code + nmax); an all-zero
// group's lanes get 0 (ggml's quirk) and scale 0. As in make_qkx2_quants, each lane remembers
// the iscale of its best grid and recomputes the codes once at the end; w * x is the scalar
// code's product, computed once instead of once per grid.
template <int n, int nmax>
VF make_qx_quants(const VF* x, const VF* weights, VI* L) {
    VF w[n], wx[n];
    for (int i = 0; i < n; ++i) {
        w[i] = weights ? weights[i] : x[i] * x[i];
        wx[i] = w[i] * x[i];
    }
    VI zero;
    const VF max = signed_extreme<n>(x, zero);
    VF iscale = splat(static_cast<float>(-nmax)) / max;
    VF sumlx = splat(0.0f);
    VF suml2 = splat(0.0f);
    for (int i = 0; i < n; ++i) {
        const VF fl = to_f(clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
        sumlx += wx[i] * fl;
        suml2 += w[i] * fl * fl;
    }
    VF scale = select(suml2 != 0.0f, sumlx / suml2, splat(0.0f));
    VF best = scale * sumlx;
    VF L_iscale = iscale;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const float num = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is));
        iscale = splat(num) / max;
        sumlx = suml2 = splat(0.0f);
        for (int i = 0; i < n; ++i) {
            const VF fl = to_f(clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
            sumlx += wx[i] * fl;
            suml2 += w[i] * fl * fl;
        }
        const VI take = (suml2 > 0.0f) & (sumlx * sumlx > best * suml2);
        L_iscale = select(take, iscale, L_iscale);
        const VF new_scale = sumlx / suml2;
        scale = select(take, new_scale, scale);
        best = select(take, new_scale * sumlx, best);
    }
    for (int i = 0; i < n; ++i) {
        const VI l = clamp(nearest_int(L_iscale * x[i]), -nmax, nmax - 1) + nmax;
        L[i] = select(zero, splat_i(0), l);
    }
    return select(zero, splat(0.0f), scale);
}

// ---- The block encoders: requantize against the stored scales, pack, write ----------------

// Q2_K / Q3_K 2-bit packing for all lanes: byte 32 h + l of qs holds codes 128 h + l, +32, +64,
// +96 at bits 0, 2, 4, 6 (the scalar pack_2bit).
inline void pack_2bit(const VI* L, VI* qs) {
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
            const VI* c = L + 128 * h + l;
            qs[32 * h + l] = c[0] | (c[32] << 2) | (c[64] << 4) | (c[96] << 6);
        }
}

// `lanes` Q2_K blocks (84 bytes each) from the scale bytes sc (scale code in the low nibble,
// min code in the high one), d, dmin and the search's codes L (kept where a sub-block's scale
// is 0): the scalar encode_q2_K_codes.
void write_q2_k(const VF* xt, const VI* sc, const HalfScale& d, const HalfScale& dmin, VI* L,
                std::byte* out) {
    for (int j = 0; j < 16; ++j) {
        const VF dl = d.value * to_f(sc[j] & 0xF);
        const VI keep = dl == 0.0f;  // the scalar code skips the sub-block
        const VF ml = dmin.value * to_f(sc[j] >> 4);
        for (int ii = 0; ii < 16; ++ii) {
            const int i = 16 * j + ii;
            const VI l = clamp(nearest_int((xt[i] + ml) / dl), 0, 3);
            L[i] = select(keep, L[i], l);
        }
    }
    VI qs[64];
    pack_2bit(L, qs);
    for (int k = 0; k < lanes; ++k) {
        u8 b[84];
        for (int j = 0; j < 16; ++j) b[j] = static_cast<u8>(sc[j][k]);
        for (int i = 0; i < 64; ++i) b[16 + i] = static_cast<u8>(qs[i][k]);
        std::memcpy(b + 80, &d.bits[k], 2);
        std::memcpy(b + 82, &dmin.bits[k], 2);
        std::memcpy(out + static_cast<std::size_t>(k) * 84, b, 84);
    }
}

// Q3_K, Q6_K and IQ4_NL have no NEON lanes (quantize_kquants_lanes.inc says why): their
// encoders are not built there.
#ifndef CK_SIMD_NEON
// `lanes` Q3_K blocks (110 bytes each) from the 6-bit scale codes ls (signed scale + 32), d and
// the search's stored codes L (0..7, kept where a sub-block's scale is 0): the scalar
// encode_q3_K_codes and pack_q3_K_scale.
void write_q3_k(const VF* xt, const VI* ls, const HalfScale& d_all, VI* L, std::byte* out) {
    for (int j = 0; j < 16; ++j) {
        const VF d = d_all.value * to_f(ls[j] - 32);
        const VI keep = d == 0.0f;
        for (int ii = 0; ii < 16; ++ii) {
            const int i = 16 * j + ii;
            const VI l = clamp(nearest_int(xt[i] / d), -4, 3) + 4;
            L[i] = select(keep, L[i], l);
        }
    }
    // hmask[m]: bit g is code 32 g + m's high bit; the low 2 bits are packed as Q2_K's.
    VI hmask[32];
    for (int m = 0; m < 32; ++m) {
        VI h = splat_i(0);
        for (int g = 0; g < 8; ++g) h |= ((L[32 * g + m] >> 2) & 1) << g;
        hmask[m] = h;
    }
    for (int i = 0; i < qk_k; ++i) L[i] &= 3;
    VI qs[64];
    pack_2bit(L, qs);
    for (int k = 0; k < lanes; ++k) {
        u8 b[110] = {};
        for (int m = 0; m < 32; ++m) b[m] = static_cast<u8>(hmask[m][k]);
        for (int i = 0; i < 64; ++i) b[32 + i] = static_cast<u8>(qs[i][k]);
        u8* const sc = b + 96;
        for (int j = 0; j < 16; ++j) {
            const int l = ls[j][k];
            if (j < 8) {
                sc[j] = static_cast<u8>(l & 0xF);
            } else {
                sc[j - 8] = static_cast<u8>(sc[j - 8] | ((l & 0xF) << 4));
            }
            sc[j % 4 + 8] = static_cast<u8>(sc[j % 4 + 8] | ((l >> 4) << (2 * (j / 4))));
        }
        std::memcpy(b + 108, &d_all.bits[k], 2);
        std::memcpy(out + static_cast<std::size_t>(k) * 110, b, 110);
    }
}
#endif

// Q4_K / Q5_K's 12 scale bytes from the 8 scale and 8 min codes (bytes, unmasked: the scalar
// pack_k4_scales), one byte per lane in sc[0..12).
inline void pack_k4_scales(const VI* ls, const VI* lm, VI* sc) {
    for (int j = 0; j < 4; ++j) {
        sc[j] = ls[j];
        sc[j + 4] = lm[j];
    }
    for (int j = 4; j < 8; ++j) {
        sc[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4);
        sc[j - 4] = (sc[j - 4] | ((ls[j] >> 4) << 6)) & 0xff;
        sc[j] = (sc[j] | ((lm[j] >> 4) << 6)) & 0xff;
    }
}

// Sub-block j's 6-bit scale and min as ggml reads them back (get_scale_min_k4).
inline void scale_min_k4(int j, const VI* sc, VI& s, VI& m) {
    if (j < 4) {
        s = sc[j] & 63;
        m = sc[j + 4] & 63;
    } else {
        s = (sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4);
        m = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4);
    }
}

// Q4_K / Q5_K: the codes 0..nmax against d, dmin and the scales packed in sc (the scalar
// requantize_k4); L holds the search's codes on entry, kept where a sub-block's scale is 0.
template <int nmax>
void requantize_k4(const VF* xt, const VI* sc, VF d, VF dmin, VI* L) {
    for (int j = 0; j < 8; ++j) {
        VI s, m;
        scale_min_k4(j, sc, s, m);
        const VF dl = d * to_f(s);
        const VI keep = dl == 0.0f;  // the scalar code skips the sub-block
        const VF ml = dmin * to_f(m);
        for (int ii = 0; ii < 32; ++ii) {
            const int i = 32 * j + ii;
            const VI l = clamp(nearest_int((xt[i] + ml) / dl), 0, nmax);
            L[i] = select(keep, L[i], l);
        }
    }
}

// `lanes` Q4_K (nmax 15, 144 bytes) or Q5_K (nmax 31, 176 bytes) blocks from the scale and min
// codes, d, dmin and the search's codes L: d, dmin, the 12 scale bytes, then for Q5_K qh (bit
// 2 g of byte j: code 64 g + j's 5th bit, bit 2 g + 1: code 64 g + j + 32's) and the low 4 bits
// as Q4_K's qs (byte 32 g + l: codes 64 g + l low, 64 g + l + 32 high).
template <int nmax>
void write_k4(const VF* xt, const VI* ls, const VI* lm, const HalfScale& d, const HalfScale& dmin,
              VI* L, std::byte* out) {
    constexpr int high_bytes = nmax > 15 ? 32 : 0;
    constexpr int bytes = 144 + high_bytes;
    VI sc[12];
    pack_k4_scales(ls, lm, sc);
    requantize_k4<nmax>(xt, sc, d.value, dmin.value, L);
    VI qh[32], ql[128];
    for (int j = 0; j < 32; ++j) qh[j] = splat_i(0);
    for (int g = 0; g < 4; ++g)
        for (int j = 0; j < 32; ++j) {
            const VI l1 = L[64 * g + j];
            const VI l2 = L[64 * g + j + 32];
            qh[j] |= ((l1 >> 4) << (2 * g)) | ((l2 >> 4) << (2 * g + 1));
            ql[32 * g + j] = (l1 & 0xF) | ((l2 & 0xF) << 4);
        }
    for (int k = 0; k < lanes; ++k) {
        u8 b[bytes];
        std::memcpy(b, &d.bits[k], 2);
        std::memcpy(b + 2, &dmin.bits[k], 2);
        for (int i = 0; i < 12; ++i) b[4 + i] = static_cast<u8>(sc[i][k]);
        for (int j = 0; j < high_bytes; ++j) b[16 + j] = static_cast<u8>(qh[j][k]);
        for (int i = 0; i < 128; ++i) b[16 + high_bytes + i] = static_cast<u8>(ql[i][k]);
        std::memcpy(out + static_cast<std::size_t>(k) * bytes, b, bytes);
    }
}

#ifndef CK_SIMD_NEON
// `lanes` Q6_K blocks (210 bytes each), the scalar quantize_block_q6_K: sub-block scales from
// make_qx_quants under the weights wt (x^2 when nullptr), 8-bit scale codes against the one
// of largest magnitude, the codes against them.
void write_q6_k(const VF* xt, const VF* wt, std::byte* out) {
    VI L[qk_k];
    VF scales[16];
    VF max_scale = splat(0.0f);
    VF max_abs_scale = splat(0.0f);
    for (int ib = 0; ib < 16; ++ib) {
        const VF scale =
            make_qx_quants<16, 32>(xt + 16 * ib, wt ? wt + 16 * ib : nullptr, L + 16 * ib);
        scales[ib] = scale;
        const VF abs_scale = vabs(scale);
        const VI bigger = abs_scale > max_abs_scale;
        max_abs_scale = select(bigger, abs_scale, max_abs_scale);
        max_scale = select(bigger, scale, max_scale);
    }
    const VI all_zero = max_abs_scale < group_max_eps;  // written as 210 zero bytes

    const VF iscale = splat(-128.0f) / max_scale;
    const HalfScale d = to_half(splat(1.0f) / iscale);
    VI sc[16];
    for (int ib = 0; ib < 16; ++ib) {
        const VI s = nearest_int(iscale * scales[ib]);
        // std::min(127, s), then the int8_t its low byte holds (sign-extended).
        sc[ib] = ((vmin(s, splat_i(127)) & 0xff) ^ 0x80) - 0x80;
    }
    for (int j = 0; j < 16; ++j) {
        const VF dl = d.value * to_f(sc[j]);
        const VI keep = dl == 0.0f;
        for (int ii = 0; ii < 16; ++ii) {
            const int i = 16 * j + ii;
            L[i] = select(keep, L[i], clamp(nearest_int(xt[i] / dl), -32, 31) + 32);
        }
    }

    // ql[64 h + l] / ql[64 h + l + 32]: codes 128 h + l, +64 and +32, +96 (low nibbles); qh[32 h
    // + l] their top 2 bits.
    VI ql[128], qh[64];
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
            const VI* c = L + 128 * h + l;
            ql[64 * h + l] = (c[0] & 0xF) | ((c[64] & 0xF) << 4);
            ql[64 * h + l + 32] = (c[32] & 0xF) | ((c[96] & 0xF) << 4);
            qh[32 * h + l] =
                (c[0] >> 4) | ((c[32] >> 4) << 2) | ((c[64] >> 4) << 4) | ((c[96] >> 4) << 6);
        }
    for (int k = 0; k < lanes; ++k) {
        std::byte* const o = out + static_cast<std::size_t>(k) * 210;
        if (all_zero[k]) {
            std::memset(o, 0, 210);
            continue;
        }
        u8 b[210];
        for (int i = 0; i < 128; ++i) b[i] = static_cast<u8>(ql[i][k]);
        for (int i = 0; i < 64; ++i) b[128 + i] = static_cast<u8>(qh[i][k]);
        for (int i = 0; i < 16; ++i) b[192 + i] = static_cast<u8>(sc[i][k]);
        std::memcpy(b + 208, &d.bits[k], 2);
        std::memcpy(o, b, 210);
    }
}
#endif

// ---- IQ4_NL's code book (iq4nl_search.hpp), one 32-value block per lane --------------------

constexpr int iq4nl_block = 32;
constexpr float iq4nl_values[16] = {-127.0f, -104.0f, -83.0f, -65.0f, -49.0f, -35.0f,
                                    -22.0f,  -10.0f,  1.0f,   13.0f,  25.0f,  38.0f,
                                    53.0f,   69.0f,   89.0f,  113.0f};

// The doubled midpoint between table entries k - 1 and k (an exact integer sum, as in scalar).
constexpr float iq4nl_mid2(int k) {
    return iq4nl_values[k - 1] + iq4nl_values[k];
}

// The tables of the lane-wise bisection (iq4nl_search), 8 entries each: at step s the index
// so far is a multiple of 2 s, so the midpoint it compares with is one of 8 / s.
struct Iq4nlTables {
    VF mid4;  // mid4[m] = iq4nl_mid2(8 m + 4), m < 2
    VF mid2;  // mid2[m] = iq4nl_mid2(4 m + 2), m < 4
    VF mid1;  // mid1[m] = iq4nl_mid2(2 m + 1), m < 8
    VF even;  // even[m] = iq4nl_values[2 m]
    VF odd;   // odd[m] = iq4nl_values[2 m + 1]
};

inline Iq4nlTables iq4nl_tables() {
    Iq4nlTables t{};
    for (int m = 0; m < 8; ++m) {
        t.mid4[m] = m < 2 ? iq4nl_mid2(8 * m + 4) : 0.0f;
        t.mid2[m] = m < 4 ? iq4nl_mid2(4 * m + 2) : 0.0f;
        t.mid1[m] = iq4nl_mid2(2 * m + 1);
        t.even[m] = iq4nl_values[2 * m];
        t.odd[m] = iq4nl_values[2 * m + 1];
    }
    return t;
}

// The scalar best_index_iq4nl, lane-wise: the same bisection (idx += step where x + x >= the
// doubled midpoint below idx + step) with the same comparisons of the same floats; the
// midpoints come from permute8 (lane k = table[idx[k]], idx in 0..7). Returns the index and
// sets q to iq4nl_values[index]. NaN fails every comparison: index 0, as in scalar code.
inline VI iq4nl_search(VF v, const Iq4nlTables& t, VF& q) {
    const VF x2 = v + v;
    VI idx = select(x2 >= iq4nl_mid2(8), splat_i(8), splat_i(0));
    idx = select(x2 >= permute8(t.mid4, idx >> 3), idx + 4, idx);
    idx = select(x2 >= permute8(t.mid2, idx >> 2), idx + 2, idx);
    const VI half = idx >> 1;
    const VI up = x2 >= permute8(t.mid1, half);
    q = select(up, permute8(t.odd, half), permute8(t.even, half));
    return select(up, idx + 1, idx);
}

// The scalar iq4nl_fit without codes: sum(w*q*x), sum(w*q*q) in the same order.
inline void iq4nl_fit(const VF* x, const VF* w, VF id, const Iq4nlTables& t, VF& sumqx, VF& sumq2) {
    sumqx = splat(0.0f);
    sumq2 = splat(0.0f);
    for (int j = 0; j < iq4nl_block; ++j) {
        VF q;
        iq4nl_search(id * x[j], t, q);
        sumqx += w[j] * q * x[j];
        sumq2 += w[j] * q * q;
    }
}

// The scalar iq4nl_block_scale: one 32-value block's scale under the weights w.
inline VF iq4nl_block_scale(const VF* x, const VF* w, const Iq4nlTables& t) {
    constexpr int ntry = 7;
    VI zero;
    const VF max = signed_extreme<iq4nl_block>(x, zero);  // zero lanes: garbage, then scale 0
    VF d = -max / splat(iq4nl_values[0]);
    VF sumqx, sumq2;
    iq4nl_fit(x, w, splat(1.0f) / d, t, sumqx, sumq2);
    d = select(sumq2 > 0.0f, sumqx / sumq2, splat(0.0f));
    VF best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; ++itry) {
        const VF id = splat(static_cast<float>(itry + static_cast<int>(iq4nl_values[0]))) / max;
        iq4nl_fit(x, w, id, t, sumqx, sumq2);
        const VI take = (sumq2 > 0.0f) & (sumqx * sumqx > best * sumq2);
        const VF new_d = sumqx / sumq2;
        d = select(take, new_d, d);
        best = select(take, new_d * sumqx, best);
    }
    return select(zero, splat(0.0f), d);
}

// ggml's inverse of a block scale: 1 / d, or 0 when d is 0 (the scalar inverse_scale).
inline VF inverse_scale(VF d) {
    return select(d != 0.0f, splat(1.0f) / d, splat(0.0f));
}

// A block's 32 codes at inverse scale id as 16 bytes (code j low, code j + 16 high).
inline void iq4nl_codes(const VF* x, VF id, const Iq4nlTables& t, VI* qs) {
    VF q;
    for (int j = 0; j < iq4nl_block / 2; ++j)
        qs[j] =
            iq4nl_search(id * x[j], t, q) | (iq4nl_search(id * x[j + iq4nl_block / 2], t, q) << 4);
}

#ifndef CK_SIMD_NEON
// `lanes` IQ4_NL blocks (18 bytes each) of x under the weights w: the scalar
// iq4nl_quantize_block.
void write_iq4_nl(const VF* xt, const VF* w, std::byte* out) {
    const Iq4nlTables t = iq4nl_tables();
    const VF scale = iq4nl_block_scale(xt, w, t);
    const HalfScale d = to_half(scale);
    VI qs[iq4nl_block / 2];
    iq4nl_codes(xt, inverse_scale(scale), t, qs);
    for (int k = 0; k < lanes; ++k) {
        u8 b[18];
        std::memcpy(b, &d.bits[k], 2);
        for (int j = 0; j < iq4nl_block / 2; ++j) b[2 + j] = static_cast<u8>(qs[j][k]);
        std::memcpy(out + static_cast<std::size_t>(k) * 18, b, 18);
    }
}
#endif

}  // namespace
}  // namespace ck::kernels
