// The weighted quantizers each SIMD translation unit provides (quantize_weighted.hpp's, one
// block per lane or one block's search in vectors), bit-identical to the scalar ones. Constant
// data (constinit), so baseline code may read a table before the CPU check; the functions it
// points to are compiled with the unit's flags and may only be called once the CPU is known to
// support that ISA (quantize_weighted_dispatch.cpp).
#pragma once

#include <span>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"

namespace ck::kernels {

struct WeightedLaneQuantizer {
    GgmlType type;
    WeightedQuantizeRowFn fn;
};

// Each family's table for one ISA, defined by its SIMD units; quantize_weighted_dispatch.cpp
// lists the families it searches.
template <Isa isa>
struct WeightedKquantLanes {  // Q2_K..Q6_K, IQ4_NL, IQ4_XS (NEON: Q2_K, Q4_K, Q5_K)
    static const std::span<const WeightedLaneQuantizer> entries;
};
// Defined by quantize_weighted_avx2.cpp and quantize_weighted_avx512.cpp
// (quantize_weighted_lanes.inc).
template <>
const std::span<const WeightedLaneQuantizer> WeightedKquantLanes<Isa::avx2>::entries;
template <>
const std::span<const WeightedLaneQuantizer> WeightedKquantLanes<Isa::avx512>::entries;
// Defined by quantize_weighted_neon.cpp (the same file, over GCC's generic vectors).
template <>
const std::span<const WeightedLaneQuantizer> WeightedKquantLanes<Isa::neon>::entries;
template <Isa isa>
struct WeightedGridLanes {  // IQ1_S, IQ1_M, IQ2_*, IQ3_*
    static const std::span<const WeightedLaneQuantizer> entries;
};
// Defined by quantize_grid_avx2.cpp and quantize_grid_avx512.cpp (quantize_grid_lanes.inc).
template <>
const std::span<const WeightedLaneQuantizer> WeightedGridLanes<Isa::avx2>::entries;
template <>
const std::span<const WeightedLaneQuantizer> WeightedGridLanes<Isa::avx512>::entries;

}  // namespace ck::kernels
