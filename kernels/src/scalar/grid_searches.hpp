// The searches of the grid quantizers (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S),
// passed to their row quantizers (quantize_iq1_iq2.cpp, quantize_iq3_iq4.cpp) as function
// pointers. Nearly all the time of these types goes into them (every candidate scale snaps
// every group to the grid, most groups through a neighbour list; IQ1 tries every split of a
// sorted group), so the SIMD units (quantize_grid_lanes.inc) bring their own and run the
// scalar code around them. A replacement gives the scalar search's results bit for bit: the
// scalar functions declared here are the specification.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "iq3_search_tables.hpp"
#include "iq_grids.hpp"
#include "iq_search_tables.hpp"
#include "quantize_weighted_simd.hpp"

namespace ck::kernels::scalar {

// One group of IQ2 values prepared for the search: weights, their square roots (the
// neighbour search's weights), magnitudes, sign bytes per 8 and the largest magnitude.
template <int N>
struct Iq2Group {
    float weight[N];
    float waux[N];
    float xval[N];
    std::uint8_t signs[N / 8];
    float max;
};

inline constexpr std::size_t iq3_sub_block_values = 32;

// One IQ3 sub-block as the search sees it: the magnitudes, their sign bits (bit i of byte k:
// value 8k + i is negative), each value's importance and its square root (the neighbour search
// weighs by the latter).
struct Iq3SubBlock {
    float xval[iq3_sub_block_values];
    float weight[iq3_sub_block_values];
    float waux[iq3_sub_block_values];
    std::uint8_t signs[iq3_sub_block_values / 8];
};

// Where the two IQ3 types' sub-block searches part.
struct Iq3Search {
    const Iq3SearchTable& tables;
    int steps;  // inverse scales (15 + 0.2 * is) / max for is = -steps..steps
    // Whether a group counts as on the grid before any candidate scale won: IQ3_XXS yes, IQ3_S
    // no (so IQ3_S refits when no candidate improved on the first guess).
    bool groups_start_on_grid;
    // IQ3_S refits every group at the final scale, IQ3_XXS only the off-grid ones.
    bool refit_on_grid_groups;
};

// IQ2_XXS: make_qp_quants (quantize_common.hpp) of the 32 magnitudes, nmax 4: the first guess
// of the scale (returned) and its codes L.
using Iq2xxsFirstScaleFn = float (*)(const Iq2Group<32>& g, std::uint8_t* L);
// IQ2_XXS: from make_qp_quants' `scale`, the best of the candidate scales for 32 values; their
// levels (0..2) go to L. Returns the scale.
using Iq2xxsRefineFn = float (*)(const Iq2Group<32>& g, float scale, std::int8_t* L);
// IQ2_XS / IQ2_S: the scale of 16 values on `table`, their levels to L.
using Iq2PairFitFn = float (*)(const Iq2SearchTable& table, const Iq2Group<16>& g, std::int8_t* L);
// IQ3_XXS / IQ3_S: the scale of a sub-block whose largest magnitude is `max`, its 32 levels
// (0..7, all on the grid unless the scale is not positive) to `levels`.
using Iq3FitFn = float (*)(const Iq3Search& s, const Iq3SubBlock& b, float max,
                           std::uint8_t* levels);

// An IQ1 group sorted by value: below sorted position i1 level 0, below i2 level 1, the rest 2.
// `choice` holds the shifts: bit 1 set shifts the first half of the group down, bit 0 the
// second half (ggml's IQ1_M k: 0 up, up; 1 up, down; 2 down, up; 3 down, down). IQ1_S shifts
// the whole group one way: 0 (ggml's +1) or 3 (ggml's -1). Mirroring the levels turns each
// shift around: 3 - choice.
struct Iq1Split {
    bool found = false;
    int i1 = -1;
    int i2 = -1;
    int choice = 0;
    float scale = 0;
};

// The three values of the IQ1 levels, shifted up or down by IQ1S_DELTA (ggml's x_p and x_m;
// IQ1_M uses the same delta).
inline constexpr float iq1_shifted_up[3] = {-1 + IQ1S_DELTA, IQ1S_DELTA, 1 + IQ1S_DELTA};
inline constexpr float iq1_shifted_down[3] = {-1 - IQ1S_DELTA, -IQ1S_DELTA, 1 - IQ1S_DELTA};

// Prefix sums of weight * x and weight over the 32 sorted values of an IQ1_S group.
struct Iq1sPrefixSums {
    float sumx[33];
    float sumw[33];
};

// Prefix sums of weight * x and weight over the 16 sorted values of an IQ1_M group, kept per
// half group (each half has its own shift).
struct HalfPrefixSums {
    float px[2][17];
    float pw[2][17];
};

// IQ1_S / IQ1_M: the exact best split of a sorted group into the three levels, for every
// shift choice, from its prefix sums; `max` is the scale when none fits.
using Iq1sSplitFn = Iq1Split (*)(const Iq1sPrefixSums& s, float max);
using Iq1mSplitFn = Iq1Split (*)(const HalfPrefixSums& s, float max);

struct GridSearches {
    Iq2xxsFirstScaleFn iq2xxs_first_scale;
    Iq2xxsRefineFn iq2xxs_refine;
    Iq2PairFitFn iq2_pair_fit;
    Iq3FitFn iq3_fit;
    Iq1sSplitFn iq1s_split;
    Iq1mSplitFn iq1m_split;
};

// The scalar searches.
float iq2xxs_first_scale(const Iq2Group<32>& g, std::uint8_t* L);
float iq2xxs_refine(const Iq2Group<32>& g, float scale, std::int8_t* L);
float iq2_pair_fit(const Iq2SearchTable& table, const Iq2Group<16>& g, std::int8_t* L);
float iq3_fit_sub_block(const Iq3Search& s, const Iq3SubBlock& b, float max, std::uint8_t* levels);
Iq1Split iq1s_split_search(const Iq1sPrefixSums& s, float max);
Iq1Split iq1m_split_search(const HalfPrefixSums& s, float max);

inline constexpr GridSearches scalar_grid_searches = {iq2xxs_first_scale, iq2xxs_refine,
                                                      iq2_pair_fit,       iq3_fit_sub_block,
                                                      iq1s_split_search,  iq1m_split_search};

// A row of IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS or IQ2_S (quantize_iq1_iq2.cpp), or of IQ3_XXS or
// IQ3_S (quantize_iq3_iq4.cpp), quantized with `searches`; the contract of
// WeightedQuantizeRowFn.
using GridRowFn = void (*)(std::uint32_t type, const GridSearches& searches, const float* x,
                           std::byte* out, std::size_t n, const float* weights);
void quantize_iq1_iq2_row(std::uint32_t type, const GridSearches& searches, const float* x,
                          std::byte* out, std::size_t n, const float* weights);
void quantize_iq3_row(std::uint32_t type, const GridSearches& searches, const float* x,
                      std::byte* out, std::size_t n, const float* weights);

// The WeightedQuantizeRowFn of `type`: `row` with `searches`.
template <GgmlType type, GridRowFn row, const GridSearches& searches>
void grid_row(const float* x, std::byte* out, std::size_t n, const float* weights) {
    row(static_cast<std::uint32_t>(type), searches, x, out, n, weights);
}

// The seven types' row quantizers with `searches`: the SIMD units' tables are theirs with their
// searches, the scalar registries' (scalar_grid_row) these with scalar_grid_searches.
template <const GridSearches& searches>
inline constexpr WeightedLaneQuantizer grid_row_quantizers[] = {
    {GgmlType::iq1_s, grid_row<GgmlType::iq1_s, quantize_iq1_iq2_row, searches>},
    {GgmlType::iq1_m, grid_row<GgmlType::iq1_m, quantize_iq1_iq2_row, searches>},
    {GgmlType::iq2_xxs, grid_row<GgmlType::iq2_xxs, quantize_iq1_iq2_row, searches>},
    {GgmlType::iq2_xs, grid_row<GgmlType::iq2_xs, quantize_iq1_iq2_row, searches>},
    {GgmlType::iq2_s, grid_row<GgmlType::iq2_s, quantize_iq1_iq2_row, searches>},
    {GgmlType::iq3_xxs, grid_row<GgmlType::iq3_xxs, quantize_iq3_row, searches>},
    {GgmlType::iq3_s, grid_row<GgmlType::iq3_s, quantize_iq3_row, searches>},
};

// The scalar row quantizer of a grid type, or nullptr for another type.
WeightedQuantizeRowFn scalar_grid_row(std::uint32_t type);

// The loop of the row functions: n / 256 blocks of `Bytes` bytes, each from its values and
// its weights (nullptr when the row has none).
template <std::size_t Bytes,
          void (*Block)(const float*, const float*, const GridSearches&, std::byte*)>
void quantize_grid_blocks(const GridSearches& searches, const float* x, std::byte* out,
                          std::size_t n, const float* weights) {
    constexpr std::size_t values = 256;
    for (std::size_t i = 0; i < n / values; ++i)
        Block(x + values * i, weights ? weights + values * i : nullptr, searches, out + Bytes * i);
}

}  // namespace ck::kernels::scalar
