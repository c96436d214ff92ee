// IQ3_XXS, IQ3_S, IQ4_NL and IQ4_XS with importance weights, bit-identical to ggml's
// quantize_iq3_xxs, quantize_iq3_s, quantize_iq4_nl and quantize_iq4_xs (ggml-quants.c:
// quantize_row_iq3_xxs_impl, quantize_row_iq3_s_impl, quantize_row_iq4_nl_impl).
//
// Without weights each type takes ggml's own unweighted path: the importance of a value is then
// x^2 instead of imatrix * sqrt(sigma2 + x^2). Every f32 operation is ggml's, in ggml's order
// (a*b*c is (a*b)*c, sums left to right), and the library is built without FMA, as ggml-base is.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "block_bytes.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "ck/support/little_endian.hpp"
#include "grid_searches.hpp"
#include "iq3_search_tables.hpp"
#include "iq4nl_search.hpp"
#include "quantize_common.hpp"

namespace ck::kernels::scalar {
namespace {

constexpr std::size_t iq_super_block = 256;
constexpr std::size_t iq_sub_block = 32;
constexpr std::size_t iq_sub_blocks = iq_super_block / iq_sub_block;
// An IQ3 sub-block is 8 groups of 4 values, each group one grid point.
constexpr std::size_t iq3_groups = iq_sub_block / 4;
// Below this largest magnitude an IQ3_XXS sub-block counts as all zero (ggml's
// GROUP_MAX_EPS_IQ3_XXS); IQ3_S skips only exact zeros.
constexpr float iq3xxs_group_max_eps = 1e-8f;

inline float iq_sum_squares(const float* x, std::size_t count) {
    float sum = 0.0f;
    for (std::size_t i = 0; i < count; ++i) sum += x[i] * x[i];
    return sum;
}

// ggml's importance of each value of a sub-block: its imatrix entry times sqrt(sigma2 + x^2),
// sigma2 being twice the super-block's mean square, or x^2 without an imatrix.
void iq_importance(const float* x, const float* quant_weights, float sigma2, float* weight) {
    for (std::size_t i = 0; i < iq_sub_block; ++i)
        weight[i] =
            quant_weights ? quant_weights[i] * std::sqrt(sigma2 + x[i] * x[i]) : x[i] * x[i];
}

void store_u16(std::byte* out, std::uint16_t v) {
    ck::le::store(out, v);
}

// ---------------------------------------------------------------------------------------------
// IQ3: each group of 4 magnitudes is a point of a grid of level quadruples (level l meaning
// (2l + 1) * scale); the signs are stored apart, the scale per sub-block as 4 bits.

// One sub-block as the search sees it (Iq3SubBlock, grid_searches.hpp).
Iq3SubBlock iq3_prepare(const float* x, const float* quant_weights, float sigma2) {
    Iq3SubBlock b;
    iq_importance(x, quant_weights, sigma2, b.weight);
    for (std::size_t i = 0; i < iq_sub_block; ++i) b.waux[i] = std::sqrt(b.weight[i]);
    for (std::size_t k = 0; k < iq_sub_block / 8; ++k)
        b.signs[k] = split_signs_8(x + 8 * k, b.xval + 8 * k);
    return b;
}

// The largest magnitude, by ggml's MAX from the first value on.
float iq3_largest(const Iq3SubBlock& b) {
    float max = b.xval[0];
    for (std::size_t i = 1; i < iq_sub_block; ++i) max = ggml_max(max, b.xval[i]);
    return max;
}

// The grid point nearest (by weighted squared error at `scale`) to the values xval among the
// neighbours of an off-grid key: its levels, ggml's iq3_find_best_neighbour (the first of equal
// fits wins). ggml aborts when no candidate beats FLT_MAX (NaN input); the first
// candidate stands then.
void iq3_best_neighbour(const Iq3SearchTable& t, unsigned key, const float* xval, const float* waux,
                        float scale, std::uint8_t* levels) {
    const std::span<const std::uint16_t> candidates = t.neighbours_of(key);
    float best_d2 = FLT_MAX;
    int best = candidates.front();
    for (const std::uint16_t j : candidates) {
        const Iq3SearchTable::Point& point = t.point(j);
        float d2 = 0.0f;
        for (std::size_t i = 0; i < 4; ++i) {
            const float diff = scale * static_cast<float>(point[i]) - xval[i];
            d2 += waux[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = j;
        }
    }
    for (std::size_t i = 0; i < 4; ++i)
        levels[i] = static_cast<std::uint8_t>((t.point(best)[i] - 1) / 2);
}

// The search tables' key of 4 levels (3 bits each, element 0 lowest).
unsigned iq3_key(const std::uint8_t* levels) {
    return levels[0] | (levels[1] << 3) | (levels[2] << 6) | (levels[3] << 9);
}

// The levels of a group of 4 at inverse scale id: the nearest levels when the grid has them
// (returns true), else the best of its neighbours at `scale` (returns false).
bool iq3_quantize_group(const Iq3SearchTable& t, const float* xval, const float* waux, float id,
                        float scale, std::uint8_t* levels) {
    for (std::size_t i = 0; i < 4; ++i)
        levels[i] =
            static_cast<std::uint8_t>(std::clamp(nearest_int(0.5f * (id * xval[i] - 1.0f)), 0, 7));
    const unsigned key = iq3_key(levels);
    if (t.index_of(key) >= 0) return true;
    iq3_best_neighbour(t, key, xval, waux, scale, levels);
    return false;
}

void iq3_weighted_sums(const Iq3SubBlock& b, const std::uint8_t* levels, float& sumqx,
                       float& sumq2) {
    sumqx = 0.0f;
    sumq2 = 0.0f;
    for (std::size_t i = 0; i < iq_sub_block; ++i) {
        const float w = b.weight[i];
        const auto q = static_cast<float>(2 * levels[i] + 1);
        sumqx += w * b.xval[i] * q;
        sumq2 += w * q * q;
    }
}

}  // namespace

// ggml's search for a sub-block's scale: every candidate inverse scale, the least-squares scale
// of the levels it gives, the best kept (sumqx^2 / sumq2, compared cross-multiplied); then, if
// a group of the best was off the grid, groups are refitted at that scale (which ones: see
// Iq3Search) and the scale fitted once more. Returns the scale; `levels` gets the 32 levels (all on
// the grid).
float iq3_fit_sub_block(const Iq3Search& s, const Iq3SubBlock& b, float max, std::uint8_t* levels) {
    std::uint8_t trial[iq_sub_block];
    bool on_grid[iq3_groups], trial_on_grid[iq3_groups];
    std::fill_n(on_grid, iq3_groups, s.groups_start_on_grid);
    std::fill_n(levels, iq_sub_block, 0);
    float best = 0.0f, scale = max / 15.0f, sumqx, sumq2;
    for (int is = -s.steps; is <= s.steps; ++is) {
        const float id = (15.0f + static_cast<float>(is) * 0.2f) / max;
        const float trial_scale = 1.0f / id;
        for (std::size_t k = 0; k < iq3_groups; ++k)
            trial_on_grid[k] = iq3_quantize_group(s.tables, b.xval + 4 * k, b.waux + 4 * k, id,
                                                  trial_scale, trial + 4 * k);
        iq3_weighted_sums(b, trial, sumqx, sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::copy_n(trial, iq_sub_block, levels);
            std::copy_n(trial_on_grid, iq3_groups, on_grid);
        }
    }
    if (std::all_of(on_grid, on_grid + iq3_groups, [](bool g) { return g; }) || !(scale > 0.0f))
        return scale;
    const float id = 1.0f / scale;
    for (std::size_t k = 0; k < iq3_groups; ++k) {
        if (on_grid[k] && !s.refit_on_grid_groups) continue;
        iq3_quantize_group(s.tables, b.xval + 4 * k, b.waux + 4 * k, id, scale, levels + 4 * k);
    }
    iq3_weighted_sums(b, levels, sumqx, sumq2);
    return sumq2 > 0.0f ? sumqx / sumq2 : scale;
}

namespace {

// The grid index of 4 levels; they are always on the grid (ggml aborts otherwise).
std::uint16_t iq3_grid_code(const Iq3SearchTable& t, const std::uint8_t* levels) {
    return static_cast<std::uint16_t>(t.index_of(iq3_key(levels)));
}

// The 4-bit code of a sub-block scale against the super-block scale d (value (2l + 1) * d).
std::uint8_t iq3_scale_code(float scale, float id) {
    return static_cast<std::uint8_t>(std::clamp(nearest_int(0.5f * (id * scale - 1.0f)), 0, 15));
}

// IQ3_XXS keeps 7 sign bits per 8 values: the eighth makes the count of negatives even. For an
// odd count ggml flips the value that costs least to flip (smallest weight * x^2, the first of
// equals), the search then seeing it with that sign.
void iq3xxs_even_signs(const float* x, Iq3SubBlock& b) {
    for (std::size_t k = 0; k < iq_sub_block / 8; ++k) {
        if (std::popcount(b.signs[k]) % 2 != 0) {
            const std::size_t at = 8 * k;
            std::size_t imin = 0;
            float min = b.weight[at] * x[at] * x[at];
            for (std::size_t i = 1; i < 8; ++i) {
                const float cost = b.weight[at + i] * x[at + i] * x[at + i];
                if (cost < min) {
                    min = cost;
                    imin = i;
                }
            }
            b.xval[at + imin] = -b.xval[at + imin];
            b.signs[k] = static_cast<std::uint8_t>(b.signs[k] ^ (1 << imin));
        }
        b.signs[k] &= 127;
    }
}

// One IQ3_XXS sub-block: its 8 grid indices and its word of 4 x 7 sign bits; returns its scale
// (0 for a sub-block below iq3xxs_group_max_eps, whose codes then stay zero).
float iq3xxs_sub_block(const float* x, const float* quant_weights, float sigma2, Iq3FitFn fit,
                       std::uint8_t* grid_codes, std::uint32_t& signs_word) {
    const Iq3SearchTable& t = iq3xxs_search_table();
    Iq3SubBlock b = iq3_prepare(x, quant_weights, sigma2);
    iq3xxs_even_signs(x, b);
    const float max = iq3_largest(b);  // after the sign fix, which can make a magnitude negative
    if (max < iq3xxs_group_max_eps) return 0.0f;
    std::uint8_t levels[iq_sub_block];
    float scale = fit({t, 15, true, false}, b, max, levels);
    if (scale < 0.0f) {  // never seen; ggml then stores the opposite signs and a positive scale
        scale = -scale;
        for (std::uint8_t& s : b.signs) s = static_cast<std::uint8_t>(~s & 127);
    }
    for (std::size_t k = 0; k < iq3_groups; ++k)
        grid_codes[k] = static_cast<std::uint8_t>(iq3_grid_code(t, levels + 4 * k));
    signs_word = b.signs[0] | b.signs[1] << 7 | b.signs[2] << 14 | std::uint32_t(b.signs[3]) << 21;
    return scale;
}

// block_iq3_xxs (98 bytes): f16 d; 64 grid indices (one per group of 4); per sub-block a u32
// of 4 x 7 sign bits with the 4-bit scale code in bits 28..31.
void quantize_iq3_xxs_super_block(const float* x, const float* quant_weights,
                                  const GridSearches& searches, std::byte* out) {
    std::uint8_t grid_codes[iq_super_block / 4] = {};
    std::uint32_t words[iq_sub_blocks] = {};
    float scales[iq_sub_blocks];
    float max_scale = 0.0f;
    const float sigma2 = 2 * iq_sum_squares(x, iq_super_block) / iq_super_block;
    for (std::size_t ib = 0; ib < iq_sub_blocks; ++ib) {
        const float* qw = quant_weights ? quant_weights + iq_sub_block * ib : nullptr;
        scales[ib] = iq3xxs_sub_block(x + iq_sub_block * ib, qw, sigma2, searches.iq3_fit,
                                      grid_codes + iq3_groups * ib, words[ib]);
        max_scale = ggml_max(max_scale, scales[ib]);
    }
    std::memset(out, 0, 98);
    if (max_scale == 0.0f) return;  // ggml zeroes the whole block, codes and signs too
    const float d = max_scale / 31;
    store_half(out, d * 1.0125f);  // ggml's fudge factor
    const float id = 1.0f / d;
    for (std::size_t ib = 0; ib < iq_sub_blocks; ++ib)
        words[ib] |= std::uint32_t(iq3_scale_code(scales[ib], id)) << 28;
    std::memcpy(out + 2, grid_codes, sizeof grid_codes);
    ck::le::store_array(out + 2 + sizeof grid_codes, words, iq_sub_blocks);
}

// Where an IQ3_S sub-block goes: the 8 low bytes of its grid indices, its 4 sign bytes, and
// the byte of ninth index bits (bit k: group k).
struct Iq3sSlots {
    std::uint8_t* grid_low;
    std::uint8_t* signs;
    std::uint8_t& grid_high;
};

// One IQ3_S sub-block; returns its scale, or nothing for a sub-block of zeros, which ggml skips
// without storing anything.
std::optional<float> iq3s_sub_block(const float* x, const float* quant_weights, float sigma2,
                                    Iq3FitFn fit, const Iq3sSlots& slots) {
    const Iq3SearchTable& t = iq3s_search_table();
    Iq3SubBlock b = iq3_prepare(x, quant_weights, sigma2);
    const float max = iq3_largest(b);
    if (max == 0.0f) return std::nullopt;
    std::uint8_t levels[iq_sub_block];
    float scale = fit({t, 9, false, true}, b, max, levels);
    if (scale < 0.0f) {  // never seen; ggml then stores the opposite signs and a positive scale
        scale = -scale;
        for (std::uint8_t& s : b.signs) s = static_cast<std::uint8_t>(~s);
    }
    for (std::size_t k = 0; k < iq3_groups; ++k) {
        const std::uint16_t code = iq3_grid_code(t, levels + 4 * k);
        slots.grid_low[k] = static_cast<std::uint8_t>(code & 255);
        slots.grid_high = static_cast<std::uint8_t>(slots.grid_high | (code >> 8) << k);
    }
    std::copy_n(b.signs, sizeof b.signs, slots.signs);
    return scale;
}

// block_iq3_s (110 bytes): f16 d; qs[64], the low bytes of the grid indices; qh[8], their
// ninth bits; signs[32], one bit per value; scales[4], two 4-bit scale codes a byte.
void quantize_iq3_s_super_block(const float* x, const float* quant_weights,
                                const GridSearches& searches, std::byte* out) {
    std::uint8_t block[110] = {};
    std::uint8_t* const qs = block + 2;
    std::uint8_t* const qh = qs + 64;
    std::uint8_t* const signs = qh + 8;
    std::uint8_t* const scale_codes = signs + 32;
    float scales[iq_sub_blocks];
    float max_scale = 0.0f;
    const float sigma2 = 2 * iq_sum_squares(x, iq_super_block) / iq_super_block;
    // ggml advances its qs and signs cursors only past the sub-blocks it stores: after a
    // sub-block of zeros the next one's codes take its place (and the last slots stay zero).
    std::size_t stored = 0;
    for (std::size_t ib = 0; ib < iq_sub_blocks; ++ib) {
        const float* qw = quant_weights ? quant_weights + iq_sub_block * ib : nullptr;
        const Iq3sSlots slots{qs + iq3_groups * stored, signs + iq_sub_block / 8 * stored, qh[ib]};
        const std::optional<float> scale =
            iq3s_sub_block(x + iq_sub_block * ib, qw, sigma2, searches.iq3_fit, slots);
        scales[ib] = scale.value_or(0.0f);
        if (!scale) continue;
        ++stored;
        max_scale = ggml_max(max_scale, *scale);
    }
    if (max_scale != 0.0f) {
        const float d = max_scale / 31;
        store_half(reinterpret_cast<std::byte*>(block), d * 1.033f);  // ggml's fudge factor
        const float id = 1.0f / d;
        for (std::size_t ib = 0; ib < iq_sub_blocks; ib += 2)
            scale_codes[ib / 2] = static_cast<std::uint8_t>(
                iq3_scale_code(scales[ib], id) | iq3_scale_code(scales[ib + 1], id) << 4);
    }
    std::memcpy(out, block, sizeof block);
}

// ---------------------------------------------------------------------------------------------
// IQ4: 32-value blocks coded against the non-linear code book (iq4nl_search.hpp).

// block_iq4_nl (18 bytes): quantize_row_iq4_nl_impl with a super-block of one block.
void quantize_iq4_nl_block(const float* x, const float* quant_weights, std::byte* out) {
    const float sigma2 = iq_sum_squares(x, iq4nl_block) * (2.0f / iq4nl_block);
    float weight[iq4nl_block];
    iq_importance(x, quant_weights, sigma2, weight);
    iq4nl_quantize_block(x, weight, out);
}

// block_iq4_xs (136 bytes): f16 d; u16 scales_h, the high 2 bits of each sub-block's 6-bit
// scale code; scales_l[4], their low 4 bits two a byte; qs[128], each sub-block's codes as in
// IQ4_NL. The sub-block scales are coded against d = -(the scale of largest magnitude) / 32, and
// the values are coded again against the scale each code stands for.
void quantize_iq4_xs_super_block(const float* x, const float* quant_weights, std::byte* out) {
    const float sigma2 = iq_sum_squares(x, iq_super_block) * (2.0f / iq_super_block);
    float scales[iq_sub_blocks];
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (std::size_t ib = 0; ib < iq_sub_blocks; ++ib) {
        const float* xb = x + iq_sub_block * ib;
        float weight[iq_sub_block];
        iq_importance(xb, quant_weights ? quant_weights + iq_sub_block * ib : nullptr, sigma2,
                      weight);
        scales[ib] = iq4nl_block_scale(xb, weight);
        if (std::fabs(scales[ib]) > amax_scale) {
            amax_scale = std::fabs(scales[ib]);
            max_scale = scales[ib];
        }
    }
    const float d = -max_scale / 32;
    store_half(out, d);
    const float id = inverse_scale(d);
    std::uint16_t scales_h = 0;
    std::uint8_t scales_l[iq_sub_blocks / 2] = {};
    for (std::size_t ib = 0; ib < iq_sub_blocks; ++ib) {
        const int l = std::clamp(nearest_int(id * scales[ib]), -32, 31);
        std::uint8_t codes[iq_sub_block];
        iq4nl_encode(x + iq_sub_block * ib, iq_sub_block, inverse_scale(d * static_cast<float>(l)),
                     codes);
        iq4nl_pack(codes, out + 8 + iq_sub_block / 2 * ib);
        const auto biased = static_cast<unsigned>(l + 32);
        scales_l[ib / 2] =
            static_cast<std::uint8_t>(scales_l[ib / 2] | (biased & 15) << 4 * (ib % 2));
        scales_h = static_cast<std::uint16_t>(scales_h | (biased >> 4) << 2 * ib);
    }
    store_u16(out + 2, scales_h);
    std::memcpy(out + 4, scales_l, sizeof scales_l);
}

}  // namespace

void quantize_iq3_row(std::uint32_t type, const GridSearches& searches, const float* x,
                      std::byte* out, std::size_t n, const float* weights) {
    if (static_cast<GgmlType>(type) == GgmlType::iq3_xxs)
        quantize_grid_blocks<98, quantize_iq3_xxs_super_block>(searches, x, out, n, weights);
    else if (static_cast<GgmlType>(type) == GgmlType::iq3_s)
        quantize_grid_blocks<110, quantize_iq3_s_super_block>(searches, x, out, n, weights);
}

WeightedQuantizeRowFn weighted_iq3_iq4(std::uint32_t type) {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::iq3_xxs:
        case GgmlType::iq3_s:
            return scalar_grid_row(type);
        case GgmlType::iq4_nl:
            return quantize_row_by_blocks<iq4nl_block, 18, quantize_iq4_nl_block>;
        case GgmlType::iq4_xs:
            return quantize_row_by_blocks<iq_super_block, 136, quantize_iq4_xs_super_block>;
        default:
            return nullptr;
    }
}

}  // namespace ck::kernels::scalar
