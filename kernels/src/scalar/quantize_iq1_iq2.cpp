// IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS and IQ2_S: grid searches with importance weights, bit-identical to
// ggml (quantize_row_<type>_impl of ggml-quants.c, one row at a time).
//
// Every group of 8 values is coded as one point of the type's grid (iq_search_tables.hpp). The
// IQ2 types take magnitudes (signs stored apart) on levels 0..2 at positions 1, 3, 5 times a
// scale, try a ladder of scales and snap off-grid codes to their nearest grid neighbour. The IQ1
// types take the values themselves on three levels -1, 0, +1 shifted by +-IQ1S_DELTA, find the
// best split of the sorted values into the three levels exactly, then snap to the grid.
//
// The float operations are ggml's, in ggml's order (a*b*c is (a*b)*c; MAX keeps its second
// operand on ties and NaN). Where ggml would stop with an assertion (only non-finite inputs get
// there), a fixed grid point is taken instead, so any input gives some output.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>

#include "block_bytes.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "ck/support/little_endian.hpp"
#include "grid_searches.hpp"
#include "iq_grids.hpp"
#include "iq_search_tables.hpp"
#include "quantize_common.hpp"

namespace ck::kernels::scalar {
namespace {

constexpr int iq12_super_block = 256;  // ggml's QK_K, the values of one IQ1 / IQ2 block

// Below these largest magnitudes a group is left zero (ggml's GROUP_MAX_EPS_*).
constexpr float iq2s_group_max_eps = 1e-8f;
constexpr float iq1m_group_max_eps = 1e-7f;
constexpr float iq1s_group_max_eps = 1e-12f;

// The IQ2 codes run over levels 0..2 (ggml's kMaxQ = 3 is one past the top).
constexpr int iq2_level_count = 3;

void put_u16(std::byte* out, std::uint16_t v) {
    ck::le::store(out, v);
}

void put_u32(std::byte* out, std::uint32_t v) {
    ck::le::store(out, v);
}

float sum_of_squares(const float* x, int n) {
    float sum = 0;
    for (int i = 0; i < n; ++i) sum += x[i] * x[i];
    return sum;
}

// The key of 8 levels (2 bits each, element 0 lowest), as the search tables index them.
unsigned iq_key(const std::int8_t* L) {
    unsigned key = 0;
    for (int i = 0; i < 8; ++i) key |= static_cast<unsigned>(L[i] & 3) << (2 * i);
    return key;
}

// The grid index of 8 levels that must lie on the grid; ggml aborts when they do not (only
// reachable with non-finite inputs), here the first grid point stands in.
int on_grid_index(const Iq2SearchTable& table, const std::int8_t* L) {
    const int index = table.index_of(iq_key(L));
    return index >= 0 ? index : 0;
}

// A per-group scale as the 4-bit (IQ2) or 3-bit (IQ1) code of ggml: round((id * s - 1) / 2).
int scale_code(float id, float scale, int top) {
    return std::max(0, std::min(top, nearest_int(0.5f * (id * scale - 1))));
}

// ---- IQ2 ----------------------------------------------------------------------------------

// ggml's iq2_find_best_neighbour and iq1_find_best_neighbour2: the neighbour of an off-grid
// key with the least weighted squared error against x at `scale`, a grid position p standing
// for value_of(p); its levels go to L and its index is returned. ggml asserts that one is
// found (the error is finite; iq1's fallback first searches the whole grid, reading past the
// group); only non-finite inputs get there, and the first neighbour stands in.
//
// An element's term of the error, weight * diff * diff with diff = scale * value - x, takes
// one of three values (a position is 1, 3 or 5), so the terms are computed once per search
// and each neighbour's error sums its elements' terms in ggml's order: the same floats.
template <class ValueOf>
int snap_to_neighbour(const Iq2SearchTable& table, unsigned key, const float* x,
                      const float* weight, float scale, ValueOf value_of, std::int8_t* L) {
    float terms[8][2 * iq2_level_count];  // [element][position]
    for (int i = 0; i < 8; ++i)
        for (int position = 1; position < 2 * iq2_level_count; position += 2) {
            const float diff = scale * value_of(static_cast<std::int8_t>(position)) - x[i];
            terms[i][position] = weight[i] * diff * diff;
        }
    const std::span<const std::uint16_t> neighbours = table.neighbours_of(key);
    float best_d2 = FLT_MAX;
    int best = neighbours[0];
    for (const std::uint16_t j : neighbours) {
        const Iq2SearchTable::Point& point = table.point(j);
        float d2 = 0;
        for (int i = 0; i < 8; ++i) d2 += terms[i][point[i]];
        if (d2 < best_d2) {
            best_d2 = d2;
            best = j;
        }
    }
    for (int i = 0; i < 8; ++i) L[i] = static_cast<std::int8_t>((table.point(best)[i] - 1) / 2);
    return best;
}

// The levels of 8 magnitudes at inverse scale id, clamped to 0..2; off the grid they move to
// the nearest neighbour at `scale`. Returns whether they were on the grid.
bool iq2_snap_levels(const Iq2SearchTable& table, const float* xval, const float* waux, float id,
                     float scale, std::int8_t* L) {
    for (int i = 0; i < 8; ++i) {
        const int l = nearest_int(0.5f * (id * xval[i] - 1));
        L[i] = static_cast<std::int8_t>(std::max(0, std::min(iq2_level_count - 1, l)));
    }
    const unsigned key = iq_key(L);
    if (table.index_of(key) >= 0) return true;
    // The IQ2 grids measure in positions: the value of position p is p.
    snap_to_neighbour(
        table, key, xval, waux, scale,
        [](std::int8_t position) { return static_cast<float>(position); }, L);
    return false;
}

struct LeastSquares {
    float sumqx = 0;
    float sumq2 = 0;
};

// The weighted sums of x * q and q * q for codes at positions q = 2 * L + 1.
LeastSquares iq2_sums(int n, const float* weight, const float* xval, const std::int8_t* L) {
    LeastSquares s;
    for (int i = 0; i < n; ++i) {
        const auto q = static_cast<float>(2 * L[i] + 1);
        s.sumqx += weight[i] * xval[i] * q;
        s.sumq2 += weight[i] * q * q;
    }
    return s;
}

// IQ2_XXS / IQ2_XS: the magnitudes of 8 values and their sign bits. Only 7 sign bits are
// stored, the 8th making the number of negatives even (ksigns_iq2xs), so with an odd number of
// negatives the value that costs least (weight * x^2) keeps the wrong sign: its magnitude is
// negated instead. Returns the 7 stored bits.
std::uint8_t iq2_even_signs(const float* xb, const float* weight, float* xval) {
    const unsigned s = split_signs_8(xb, xval);
    if (std::popcount(s) % 2) {
        int imin = 0;
        float min = weight[0] * xb[0] * xb[0];
        for (int i = 1; i < 8; ++i) {
            const float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        return static_cast<std::uint8_t>((s ^ (1u << imin)) & 127);
    }
    return static_cast<std::uint8_t>(s & 127);
}

template <int N>
void finish_iq2_group(Iq2Group<N>& g) {
    for (int i = 0; i < N; ++i) g.waux[i] = std::sqrt(g.weight[i]);
    g.max = g.xval[0];
    for (int i = 1; i < N; ++i) g.max = ggml_max(g.max, g.xval[i]);
}

// IQ2_XXS / IQ2_XS groups: imatrix weights times sqrt(sigma2 + x^2), even signs.
template <int N>
Iq2Group<N> weighted_even_group(const float* xb, const float* qw, float sigma2) {
    Iq2Group<N> g;
    for (int i = 0; i < N; ++i) g.weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    for (int k = 0; k < N / 8; ++k)
        g.signs[k] = iq2_even_signs(xb + 8 * k, g.weight + 8 * k, g.xval + 8 * k);
    finish_iq2_group(g);
    return g;
}

// A negative scale (ggml: "should never happen") is made positive by flipping every stored
// sign bit (`stored_signs`: 127 for the types with implied parity, 255 for IQ2_S).
float make_scale_positive(float scale, std::uint8_t* signs, int groups, unsigned stored_signs) {
    if (scale >= 0) return scale;
    for (int k = 0; k < groups; ++k) signs[k] = static_cast<std::uint8_t>(~signs[k] & stored_signs);
    return -scale;
}

}  // namespace

float iq2xxs_first_scale(const Iq2Group<32>& g, std::uint8_t* L) {
    return make_qp_quants(32, iq2_level_count + 1, g.xval, L, g.weight);
}

// IQ2_XXS after make_qp_quants: scales (5 + is / 10) / eff_max for is = -6..6, each group
// snapped to the grid; the best least-squares fit wins, then every group is requantized at the
// fitted scale and the scale refitted. L ends on the grid unless the scale is not positive.
float iq2xxs_refine(const Iq2Group<32>& g, float scale, std::int8_t* L) {
    const Iq2SearchTable& table = iq2xxs_search_table();
    const float eff_max = scale * static_cast<float>(iq2_level_count);
    float best = 0;
    std::int8_t Laux[32];
    for (int is = -6; is <= 6; ++is) {
        const float id =
            (static_cast<float>(2 * iq2_level_count - 1) + static_cast<float>(is) * 0.1f) / eff_max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 4; ++k)
            iq2_snap_levels(table, g.xval + 8 * k, g.waux + 8 * k, id, this_scale, Laux + 8 * k);
        const LeastSquares s = iq2_sums(32, g.weight, g.xval, Laux);
        if (s.sumq2 > 0 && s.sumqx * s.sumqx > best * s.sumq2) {
            scale = s.sumqx / s.sumq2;
            best = scale * s.sumqx;
            std::memcpy(L, Laux, 32);
        }
    }
    if (scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 4; ++k)
            iq2_snap_levels(table, g.xval + 8 * k, g.waux + 8 * k, id, scale, L + 8 * k);
        const LeastSquares s = iq2_sums(32, g.weight, g.xval, L);
        if (s.sumq2 > 0) scale = s.sumqx / s.sumq2;
    }
    return scale;
}

namespace {

// One 32-value group of IQ2_XXS: its scale (0 leaves the group zero) and its two words, four
// grid indices and four 7-bit sign fields.
float iq2xxs_group(const float* xb, const float* qw, float sigma2, const GridSearches& searches,
                   std::uint32_t* words) {
    Iq2Group<32> g = weighted_even_group<32>(xb, qw, sigma2);
    if (g.max < group_max_eps) return 0;
    std::int8_t L[32];
    float scale = searches.iq2xxs_first_scale(g, reinterpret_cast<std::uint8_t*>(L));
    if (scale * static_cast<float>(iq2_level_count) <= 0) return 0;
    scale = make_scale_positive(searches.iq2xxs_refine(g, scale, L), g.signs, 4, 127);
    const Iq2SearchTable& table = iq2xxs_search_table();
    for (int k = 0; k < 4; ++k) {
        words[0] |= static_cast<std::uint32_t>(on_grid_index(table, L + 8 * k)) << (8 * k);
        words[1] |= static_cast<std::uint32_t>(g.signs[k]) << (7 * k);
    }
    return scale;
}

// IQ2_XXS, 66 bytes: d (f16), then per 32 values a word of grid indices and a word of signs
// with the group's 4-bit scale on top.
void quantize_iq2_xxs_block(const float* x, const float* qw, const GridSearches& searches,
                            std::byte* out) {
    const float sigma2 = sum_of_squares(x, iq12_super_block) / iq12_super_block;
    std::uint32_t words[16] = {};
    float scales[8];
    float max_scale = 0;
    for (int ib = 0; ib < 8; ++ib) {
        scales[ib] = iq2xxs_group(x + 32 * ib, qw + 32 * ib, sigma2, searches, words + 2 * ib);
        max_scale = ggml_max(max_scale, scales[ib]);
    }
    store_half(out, 0.f);
    if (!max_scale) {
        std::memset(out + 2, 0, 64);
        return;
    }
    const float d = max_scale / 31;
    store_half(out, d);
    const float id = 1 / d;
    for (int ib = 0; ib < 8; ++ib)
        words[2 * ib + 1] |= static_cast<std::uint32_t>(scale_code(id, scales[ib], 15)) << 28;
    for (int w = 0; w < 16; ++w) put_u32(out + 2 + 4 * w, words[w]);
}

}  // namespace

// IQ2_XS and IQ2_S, 16 values in two groups of 8: scales (5 + is / 10) / max for is = -9..9,
// each group snapped to the grid; the best least-squares fit wins. Groups that had to move to
// a neighbour are then requantized at the fitted scale, and the scale refitted.
float iq2_pair_fit(const Iq2SearchTable& table, const Iq2Group<16>& g, std::int8_t* L) {
    float best = 0;
    float scale = g.max / static_cast<float>(2 * iq2_level_count - 1);
    bool on_grid[2] = {true, true};
    std::int8_t Laux[16];
    for (int is = -9; is <= 9; ++is) {
        const float id =
            (static_cast<float>(2 * iq2_level_count - 1) + static_cast<float>(is) * 0.1f) / g.max;
        const float this_scale = 1 / id;
        bool on_grid_aux[2];
        for (int k = 0; k < 2; ++k)
            on_grid_aux[k] = iq2_snap_levels(table, g.xval + 8 * k, g.waux + 8 * k, id, this_scale,
                                             Laux + 8 * k);
        const LeastSquares s = iq2_sums(16, g.weight, g.xval, Laux);
        if (s.sumq2 > 0 && s.sumqx * s.sumqx > best * s.sumq2) {
            scale = s.sumqx / s.sumq2;
            best = scale * s.sumqx;
            std::memcpy(L, Laux, 16);
            on_grid[0] = on_grid_aux[0];
            on_grid[1] = on_grid_aux[1];
        }
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 2; ++k)
            if (!on_grid[k])
                iq2_snap_levels(table, g.xval + 8 * k, g.waux + 8 * k, id, scale, L + 8 * k);
        const LeastSquares s = iq2_sums(16, g.weight, g.xval, L);
        if (s.sumq2 > 0) scale = s.sumqx / s.sumq2;
    }
    return scale;
}

namespace {

// IQ2_XS / IQ2_S: the scale of 16 values and their levels L (on the grid), or nothing when the
// group is left zero (its largest magnitude below `group_max_eps`).
std::optional<float> iq2_pair_scale(const Iq2SearchTable& table, Iq2Group<16>& g,
                                    float group_max_eps, unsigned stored_signs, Iq2PairFitFn fit,
                                    std::int8_t* L) {
    if (g.max < group_max_eps) return std::nullopt;
    return make_scale_positive(fit(table, g, L), g.signs, 2, stored_signs);
}

// Puts two 4-bit scale codes per byte, the even group in the low nibble.
void put_iq2_nibble_scales(const float* scales, float id, std::byte* out) {
    for (int ib = 0; ib < 16; ib += 2) {
        const int lo = scale_code(id, scales[ib], 15);
        const int hi = scale_code(id, scales[ib + 1], 15);
        out[ib / 2] = static_cast<std::byte>(lo | (hi << 4));
    }
}

// IQ2_XS, 74 bytes: d (f16), per 8 values a 16-bit word (9-bit grid index, 7 sign bits), per
// 16 values a 4-bit scale.
void quantize_iq2_xs_block(const float* x, const float* qw, const GridSearches& searches,
                           std::byte* out) {
    const Iq2SearchTable& table = iq2xs_search_table();
    const float sigma2 = sum_of_squares(x, iq12_super_block) / iq12_super_block;
    std::uint16_t q2[32] = {};
    float scales[16];
    float max_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        Iq2Group<16> g = weighted_even_group<16>(x + 16 * ib, qw + 16 * ib, sigma2);
        std::int8_t L[16] = {};
        const std::optional<float> scale =
            iq2_pair_scale(table, g, group_max_eps, 127, searches.iq2_pair_fit, L);
        scales[ib] = scale.value_or(0);
        if (!scale) continue;
        for (int k = 0; k < 2; ++k)
            q2[2 * ib + k] =
                static_cast<std::uint16_t>(on_grid_index(table, L + 8 * k) | (g.signs[k] << 9));
        max_scale = ggml_max(max_scale, *scale);
    }
    store_half(out, 0.f);
    std::memset(out + 2, 0, 72);
    if (!max_scale) return;
    const float d = max_scale / 31;
    store_half(out, d);
    put_iq2_nibble_scales(scales, 1 / d, out + 66);
    for (int w = 0; w < 32; ++w) put_u16(out + 2 + 2 * w, q2[w]);
}

// IQ2_S groups: imatrix weights times sqrt(sigma2 + x^2), or without an imatrix
// sigma2 / 4 + x^2; all 8 signs stored.
Iq2Group<16> iq2s_group(const float* xb, const float* qw, float sigma2) {
    Iq2Group<16> g;
    for (int i = 0; i < 16; ++i)
        g.weight[i] =
            qw ? qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]) : 0.25f * sigma2 + xb[i] * xb[i];
    for (int k = 0; k < 2; ++k) g.signs[k] = split_signs_8(xb + 8 * k, g.xval + 8 * k);
    finish_iq2_group(g);
    return g;
}

// IQ2_S, 82 bytes: d (f16), 32 low bytes of the 10-bit grid indices, 32 sign bytes, 8 bytes
// of the indices' top 2 bits, 8 bytes of 4-bit scales. Written group by group, so a block whose
// scales all come out 0 keeps its codes.
void quantize_iq2_s_block(const float* x, const float* qw, const GridSearches& searches,
                          std::byte* out) {
    const Iq2SearchTable& table = iq2s_search_table();
    std::memset(out, 0, 82);
    const float sigma2 = 2 * sum_of_squares(x, iq12_super_block) / iq12_super_block;
    float scales[16];
    float max_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        Iq2Group<16> g = iq2s_group(x + 16 * ib, qw ? qw + 16 * ib : nullptr, sigma2);
        std::int8_t L[16] = {};
        const std::optional<float> scale =
            iq2_pair_scale(table, g, iq2s_group_max_eps, 255, searches.iq2_pair_fit, L);
        scales[ib] = scale.value_or(0);
        if (!scale) continue;
        for (int k = 0; k < 2; ++k) {
            const int i8 = 2 * ib + k;
            const int index = on_grid_index(table, L + 8 * k);
            out[2 + i8] = static_cast<std::byte>(index & 255);
            out[66 + i8 / 4] |= static_cast<std::byte>((index >> 8) << (2 * (i8 % 4)));
            out[34 + i8] = static_cast<std::byte>(g.signs[k]);
        }
        max_scale = ggml_max(max_scale, *scale);
    }
    if (!max_scale) return;
    const float d = max_scale / 31;
    store_half(out, d * 0.9875f);
    put_iq2_nibble_scales(scales, 1 / d, out + 74);
}

// ---- IQ1 ----------------------------------------------------------------------------------

// ggml sorts (value, index) pairs by value with qsort, which glibc runs as a top-down merge
// sort for arrays this small (taking the left element unless it compares greater). Replayed
// here, so equal values, and NaNs (equal to everything), come out in glibc's order.
void merge_sort_by_value(const float* x, int* order, int* scratch, int n) {
    if (n <= 1) return;
    const int n1 = n / 2;
    merge_sort_by_value(x, order, scratch, n1);
    merge_sort_by_value(x, order + n1, scratch, n - n1);
    int a = 0;
    int b = n1;
    int out = 0;
    while (a < n1 && b < n) {  // without a branch on the comparison, which is a coin toss
        const bool right = x[order[a]] > x[order[b]];
        scratch[out++] = right ? order[b] : order[a];
        b += right;
        a += !right;
    }
    while (a < n1) scratch[out++] = order[a++];
    std::copy(scratch, scratch + out, order);
}

// IQ1_S: the prefix sums of weight * x and weight over the sorted values, which give each
// split's least-squares fit in constant time.
Iq1sPrefixSums iq1s_prefix_sums(const float* xb, const float* weight, const int* order) {
    Iq1sPrefixSums s;
    s.sumx[0] = s.sumw[0] = 0;
    for (int j = 0; j < 32; ++j) {
        const int i = order[j];
        s.sumx[j + 1] = s.sumx[j] + weight[i] * xb[i];
        s.sumw[j + 1] = s.sumw[j] + weight[i];
    }
    return s;
}

}  // namespace

// IQ1_S: the exact best split of 32 sorted values into the three levels, for either shift.
Iq1Split iq1s_split_search(const Iq1sPrefixSums& s, float max) {
    const float* sumx = s.sumx;
    const float* sumw = s.sumw;
    float best_score = -FLT_MAX;
    Iq1Split best;
    best.scale = max;
    for (int i1 = 0; i1 <= 32; ++i1) {
        for (int i2 = i1; i2 <= 32; ++i2) {
            for (const int choice : {0, 3}) {
                const float* v = choice == 0 ? iq1_shifted_up : iq1_shifted_down;
                const float sumqx = (sumx[i1] - sumx[0]) * v[0] + (sumx[i2] - sumx[i1]) * v[1] +
                                    (sumx[32] - sumx[i2]) * v[2];
                const float sumq2 = (sumw[i1] - sumw[0]) * v[0] * v[0] +
                                    (sumw[i2] - sumw[i1]) * v[1] * v[1] +
                                    (sumw[32] - sumw[i2]) * v[2] * v[2];
                if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                    best = {true, i1, i2, choice, sumqx / sumq2};
                    best_score = best.scale * sumqx;
                }
            }
        }
    }
    return best;
}

namespace {

HalfPrefixSums half_prefix_sums(const float* xb, const float* weight, const int* order) {
    HalfPrefixSums s;
    s.px[0][0] = s.px[1][0] = 0;
    s.pw[0][0] = s.pw[1][0] = 0;
    for (int j = 0; j < 16; ++j) {
        const int i = order[j];
        const int h = i < 8 ? 0 : 1;
        s.px[h][j + 1] = s.px[h][j] + weight[i] * xb[i];
        s.px[1 - h][j + 1] = s.px[1 - h][j];
        s.pw[h][j + 1] = s.pw[h][j] + weight[i];
        s.pw[1 - h][j + 1] = s.pw[1 - h][j];
    }
    return s;
}

}  // namespace

// IQ1_M: the exact best split of 16 sorted values, for the four pairs of half-group shifts
// (0: up, up; 1: up, down; 2: down, up; 3: down, down). As the levels are one apart, a split's
// sum of q * x is T * v[2] - P(i1) - P(i2) (ggml's algebra, kept for its rounding).
Iq1Split iq1m_split_search(const HalfPrefixSums& s, float max) {
    const float txs[2] = {s.px[0][16], s.px[1][16]};
    const float tws[2] = {s.pw[0][16], s.pw[1][16]};
    const float* up = iq1_shifted_up;
    const float* down = iq1_shifted_down;
    const float p2 = up[2], m2 = down[2];
    const float cp1 = up[0] * up[0] - up[1] * up[1], cp2 = up[1] * up[1] - up[2] * up[2];
    const float cm1 = down[0] * down[0] - down[1] * down[1];
    const float cm2 = down[1] * down[1] - down[2] * down[2];
    float best_score = -FLT_MAX;
    Iq1Split best;
    best.scale = max;
    for (int i1 = 0; i1 <= 16; ++i1) {
        for (int i2 = i1; i2 <= 16; ++i2) {
            float qx_p[2], qx_m[2], q2_p[2], q2_m[2];
            for (int h = 0; h < 2; ++h) {
                const float sx = s.px[h][i1] + s.px[h][i2];
                qx_p[h] = txs[h] * p2 - sx;
                qx_m[h] = txs[h] * m2 - sx;
                q2_p[h] = tws[h] * p2 * p2 + s.pw[h][i1] * cp1 + s.pw[h][i2] * cp2;
                q2_m[h] = tws[h] * m2 * m2 + s.pw[h][i1] * cm1 + s.pw[h][i2] * cm2;
            }
            const float sumqx[4] = {qx_p[0] + qx_p[1], qx_p[0] + qx_m[1], qx_m[0] + qx_p[1],
                                    qx_m[0] + qx_m[1]};
            const float sumq2[4] = {q2_p[0] + q2_p[1], q2_p[0] + q2_m[1], q2_m[0] + q2_p[1],
                                    q2_m[0] + q2_m[1]};
            for (int k = 0; k < 4; ++k) {
                if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
                    best = {true, i1, i2, k, sumqx[k] / sumq2[k]};
                    best_score = best.scale * sumqx[k];
                }
            }
        }
    }
    return best;
}

namespace {

// The levels of a split, in the values' own order.
void iq1_split_levels(const Iq1Split& split, const int* order, int n, std::int8_t* L) {
    for (int j = 0; j < n; ++j)
        L[order[j]] = static_cast<std::int8_t>(j < split.i1 ? 0 : j < split.i2 ? 1 : 2);
}

// Puts each group of 8 levels on the IQ1 grid (off-grid ones move to their best neighbour at
// `scale`, group k's levels meaning values[k][l]) and, when one moved, refits the scale.
float iq1_snap_to_grid(const float* xb, const float* weight, std::int8_t* L,
                       const float* const* values, int groups, float scale, std::uint16_t* index) {
    const Iq2SearchTable& table = iq1s_search_table();
    bool all_on_grid = true;
    for (int k = 0; k < groups; ++k) {
        const unsigned key = iq_key(L + 8 * k);
        int grid_index = table.index_of(key);
        if (grid_index < 0) {
            all_on_grid = false;
            const float* group_values = values[k];
            const auto value_of = [group_values](std::int8_t position) {
                return group_values[(position - 1) / 2];
            };
            grid_index = snap_to_neighbour(table, key, xb + 8 * k, weight + 8 * k, scale, value_of,
                                           L + 8 * k);
        }
        index[k] = static_cast<std::uint16_t>(grid_index);
    }
    if (all_on_grid) return scale;
    float sumqx = 0, sumq2 = 0;
    for (int k = 0; k < groups; ++k) {
        const Iq2SearchTable::Point& point = table.point(index[k]);
        for (int j = 0; j < 8; ++j) {
            const float w = weight[8 * k + j];
            const float q = values[k][(point[j] - 1) / 2];
            sumqx += w * q * xb[8 * k + j];
            sumq2 += w * q * q;
        }
    }
    return sumqx > 0 && sumq2 > 0 ? sumqx / sumq2 : scale;
}

float largest_magnitude(const float* x, int n) {
    float max = std::fabs(x[0]);
    for (int i = 1; i < n; ++i) max = ggml_max(max, std::fabs(x[i]));
    return max;
}

// IQ1 weights: imatrix weights times sqrt(sigma2 + x^2), or (IQ1_M without an imatrix) x^2.
void iq1_weights(const float* xb, const float* qw, float sigma2, int n, float* weight) {
    for (int i = 0; i < n; ++i)
        weight[i] = qw ? qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
}

// The split of an IQ1_S (N = 32) or IQ1_M (N = 16) group: sorts it and searches the splits;
// on success the levels go to L, and a negative scale is turned positive by mirroring the
// levels and the shifts.
template <int N>
Iq1Split iq1_split(const float* xb, const float* weight, float max, const GridSearches& searches,
                   std::int8_t* L) {
    int order[N], scratch[N];
    for (int j = 0; j < N; ++j) order[j] = j;
    merge_sort_by_value(xb, order, scratch, N);
    Iq1Split split;
    if constexpr (N == 32)
        split = searches.iq1s_split(iq1s_prefix_sums(xb, weight, order), max);
    else
        split = searches.iq1m_split(half_prefix_sums(xb, weight, order), max);
    if (!split.found) return split;
    iq1_split_levels(split, order, N, L);
    if (split.scale < 0) {
        for (int j = 0; j < N; ++j) L[j] = static_cast<std::int8_t>(2 - L[j]);
        split.scale = -split.scale;
        split.choice = 3 - split.choice;
    }
    return split;
}

// The values of the levels of half `half` of an IQ1 group under `choice` (for IQ1_S, whose
// choice is 0 or 3, both halves agree).
const float* iq1_half_values(int choice, int half) {
    const bool down = half == 0 ? choice >= 2 : choice % 2 == 1;
    return down ? iq1_shifted_down : iq1_shifted_up;
}

// One group of N values of IQ1_S (32) or IQ1_M (16), left zero below `group_max_eps`: its
// scale, shift choice (0 when left zero) and grid indices. Returns false when left zero.
template <int N>
bool iq1_group(const float* xb, const float* qw, float sigma2, float group_max_eps,
               const GridSearches& searches, float& scale, int& choice, std::uint16_t* index) {
    float weight[N];
    iq1_weights(xb, qw, sigma2, N, weight);
    scale = 0;
    choice = 0;
    const float max = largest_magnitude(xb, N);
    if (max < group_max_eps) return false;
    std::int8_t L[N];
    const Iq1Split split = iq1_split<N>(xb, weight, max, searches, L);
    if (!split.found) return false;
    choice = split.choice;
    const float* per_group[N / 8];
    for (int k = 0; k < N / 8; ++k) per_group[k] = iq1_half_values(choice, k < N / 16 ? 0 : 1);
    scale = iq1_snap_to_grid(xb, weight, L, per_group, N / 8, split.scale, index);
    return true;
}

// The groups of N values of an IQ1 block (IQ1_S: 32, IQ1_M: 16): each one's scale, shift
// choice and grid indices, whether it was coded (not left zero below `group_max_eps`), and the
// largest scale of the coded ones.
template <int N>
struct Iq1Groups {
    static constexpr int count = iq12_super_block / N;
    float sigma2;
    float scales[count];
    int choices[count];
    std::uint16_t index[count][N / 8];
    bool coded[count];
    float max_scale = 0;
};

template <int N>
Iq1Groups<N> iq1_block_groups(const float* x, const float* qw, float group_max_eps,
                              const GridSearches& searches) {
    Iq1Groups<N> g;
    g.sigma2 = 2 * sum_of_squares(x, iq12_super_block) / iq12_super_block;
    for (int ib = 0; ib < g.count; ++ib) {
        g.coded[ib] = iq1_group<N>(x + N * ib, qw ? qw + N * ib : nullptr, g.sigma2, group_max_eps,
                                   searches, g.scales[ib], g.choices[ib], g.index[ib]);
        if (g.coded[ib]) g.max_scale = ggml_max(g.max_scale, g.scales[ib]);
    }
    return g;
}

// IQ1_S, 50 bytes: d (f16), 32 low bytes of the 11-bit grid indices, per 32 values a 16-bit
// word: the indices' top 3 bits (4 x 3), a 3-bit scale, and on top whether the shift is down.
// Codes are written group by group, so a block whose scales all come out 0 keeps them.
void quantize_iq1_s_block(const float* x, const float* qw, const GridSearches& searches,
                          std::byte* out) {
    std::memset(out, 0, 50);
    const Iq1Groups<32> g = iq1_block_groups<32>(x, qw, iq1s_group_max_eps, searches);
    std::uint16_t qh[8] = {};
    for (int ib = 0; ib < 8; ++ib) {
        if (!g.coded[ib]) continue;
        for (int k = 0; k < 4; ++k) {
            out[2 + 4 * ib + k] = static_cast<std::byte>(g.index[ib][k] & 255);
            qh[ib] = static_cast<std::uint16_t>(qh[ib] | ((g.index[ib][k] >> 8) << (3 * k)));
        }
    }
    if (g.max_scale) {
        const float d = g.max_scale / 15;
        store_half(out, d * 1.125f);
        const float id = 1 / d;
        for (int ib = 0; ib < 8; ++ib) {
            const int l = scale_code(id, g.scales[ib], 7) | (g.choices[ib] == 3 ? 8 : 0);
            qh[ib] = static_cast<std::uint16_t>(qh[ib] | (l << 12));
        }
    }
    for (int ib = 0; ib < 8; ++ib) put_u16(out + 34 + 2 * ib, qh[ib]);
}

// IQ1_M's super-block scale: the least-squares fit of the whole block at its coded group
// scales (2 l + 1) and grid points (groups left zero count as grid point 0, up-shifted), or
// `d` when that has no weight, times ggml's fudge factor; its f16 bits go to the top nibbles
// of the four scale words.
void put_iq1m_block_scale(const float* x, const float* qw, float sigma2, float d, const int* codes,
                          const int* choices, const std::byte* qs, const std::byte* qh,
                          std::uint16_t* sc) {
    const Iq2SearchTable& table = iq1s_search_table();
    float sumqx = 0, sumq2 = 0;
    for (int ib = 0; ib < 16; ++ib) {
        const float* xb = x + 16 * ib;
        float weight[16];
        iq1_weights(xb, qw ? qw + 16 * ib : nullptr, sigma2, 16, weight);
        for (int k = 0; k < 2; ++k) {
            const int high = (std::to_integer<int>(qh[ib]) << (8 - 4 * k)) & 0x700;
            const Iq2SearchTable::Point& point =
                table.point(std::to_integer<int>(qs[2 * ib + k]) + high);
            const float* values = iq1_half_values(choices[ib], k);
            for (int j = 0; j < 8; ++j) {
                const float w = weight[8 * k + j];
                const float q = values[(point[j] - 1) / 2] * static_cast<float>(2 * codes[ib] + 1);
                sumqx += w * q * xb[8 * k + j];
                sumq2 += w * q * q;
            }
        }
    }
    if (sumq2 > 0) d = sumqx / sumq2;
    const std::uint16_t bits = f32_to_f16(d * 1.1125f);
    sc[0] = static_cast<std::uint16_t>(sc[0] | ((bits & 0x000f) << 12));
    sc[1] = static_cast<std::uint16_t>(sc[1] | ((bits & 0x00f0) << 8));
    sc[2] = static_cast<std::uint16_t>(sc[2] | ((bits & 0x0f00) << 4));
    sc[3] = static_cast<std::uint16_t>(sc[3] | (bits & 0xf000));
}

// IQ1_M, 56 bytes: 32 low bytes of the 11-bit grid indices, per 16 values a byte with the two
// indices' top 3 bits and the halves' shift bits (0x08, 0x80), then four 16-bit words holding
// the 3-bit group scales (4 each) and, in their top nibbles, the f16 super-block scale.
void quantize_iq1_m_block(const float* x, const float* qw, const GridSearches& searches,
                          std::byte* out) {
    std::memset(out, 0, 56);
    const Iq1Groups<16> g = iq1_block_groups<16>(x, qw, iq1m_group_max_eps, searches);
    for (int ib = 0; ib < 16; ++ib) {
        if (!g.coded[ib]) continue;
        const std::uint16_t* index = g.index[ib];
        out[2 * ib] = static_cast<std::byte>(index[0] & 255);
        out[2 * ib + 1] = static_cast<std::byte>(index[1] & 255);
        out[32 + ib] = static_cast<std::byte>((index[0] >> 8) | ((index[1] >> 8) << 4));
    }
    if (!g.max_scale) return;
    constexpr std::uint8_t shift_bits[4] = {0x00, 0x80, 0x08, 0x88};
    const float d = g.max_scale / 15;
    const float id = 1 / d;
    int codes[16];
    std::uint16_t sc[4] = {};
    for (int ib = 0; ib < 16; ++ib) {
        codes[ib] = scale_code(id, g.scales[ib], 7);
        sc[ib / 4] = static_cast<std::uint16_t>(sc[ib / 4] | (codes[ib] << (3 * (ib % 4))));
        out[32 + ib] |= static_cast<std::byte>(shift_bits[g.choices[ib]]);
    }
    put_iq1m_block_scale(x, qw, g.sigma2, d, codes, g.choices, out, out + 32, sc);
    for (int w = 0; w < 4; ++w) put_u16(out + 48 + 2 * w, sc[w]);
}

}  // namespace

void quantize_iq1_iq2_row(std::uint32_t type, const GridSearches& searches, const float* x,
                          std::byte* out, std::size_t n, const float* weights) {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::iq1_s:
            return quantize_grid_blocks<50, quantize_iq1_s_block>(searches, x, out, n, weights);
        case GgmlType::iq1_m:
            return quantize_grid_blocks<56, quantize_iq1_m_block>(searches, x, out, n, weights);
        case GgmlType::iq2_xxs:
            return quantize_grid_blocks<66, quantize_iq2_xxs_block>(searches, x, out, n, weights);
        case GgmlType::iq2_xs:
            return quantize_grid_blocks<74, quantize_iq2_xs_block>(searches, x, out, n, weights);
        case GgmlType::iq2_s:
            return quantize_grid_blocks<82, quantize_iq2_s_block>(searches, x, out, n, weights);
        default:
            return;
    }
}

WeightedQuantizeRowFn scalar_grid_row(std::uint32_t type) {
    for (const WeightedLaneQuantizer& q : grid_row_quantizers<scalar_grid_searches>)
        if (static_cast<std::uint32_t>(q.type) == type) return q.fn;
    return nullptr;
}

WeightedQuantizeRowFn weighted_iq1_iq2(std::uint32_t type) {
    // Every grid type is this file's but IQ3_XXS and IQ3_S (quantize_iq3_iq4.cpp's).
    const auto t = static_cast<GgmlType>(type);
    return t == GgmlType::iq3_xxs || t == GgmlType::iq3_s ? nullptr : scalar_grid_row(type);
}

}  // namespace ck::kernels::scalar
