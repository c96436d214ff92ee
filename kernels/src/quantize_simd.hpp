// The quantizers each SIMD translation unit provides (Q2_K..Q6_K, IQ4_NL; one block per lane,
// bit-identical to the scalar reference), and the baseline helper they call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize.hpp"

namespace ck::kernels {

// Baseline code (quantize_dispatch.cpp): h[i] = f32_to_f16(in[i]), back[i] = f16_to_f32(h[i]),
// so the SIMD units round d and dmin with the scalar code's own conversion.
void f16_round_trip(const float* in, std::uint16_t* h, float* back, std::size_t n);

// The quantizers of the SIMD unit for `isa`, one block per lane: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K
// and IQ4_NL on x86-64; Q2_K, Q4_K and Q5_K on NEON (quantize_kquants_lanes.inc says why).
// Constant data (constinit), so baseline code may read the table before the CPU
// check; the functions it points to are compiled with the unit's flags and may only be called
// once the CPU is known to support that ISA (see quantize_dispatch.cpp).
struct LaneQuantizer {
    GgmlType type;
    QuantizeRowFn fn;
};
template <Isa isa>
struct LaneQuantizers {
    static const std::span<const LaneQuantizer> entries;
};
// Defined by quantize_kquants_avx2.cpp and quantize_kquants_avx512.cpp
// (quantize_kquants_lanes.inc).
template <>
const std::span<const LaneQuantizer> LaneQuantizers<Isa::avx2>::entries;
template <>
const std::span<const LaneQuantizer> LaneQuantizers<Isa::avx512>::entries;
// Defined by quantize_kquants_neon.cpp (the same file, over GCC's generic vectors).
template <>
const std::span<const LaneQuantizer> LaneQuantizers<Isa::neon>::entries;

}  // namespace ck::kernels
