// The kernels each SIMD translation unit provides itself. Entries left null fall back to the
// scalar reference. These functions are compiled with their ISA's flags, so they may only be
// called once the CPU is known to support that ISA.
#pragma once

#include "ck/kernels/dequant.hpp"

namespace ck::kernels {

template <Isa isa>
DequantTable own_kernels();
// Defined by dequant_avx2.cpp and dequant_avx512.cpp (simd_dequant_blocks.inc).
template <>
DequantTable own_kernels<Isa::avx2>();
template <>
DequantTable own_kernels<Isa::avx512>();
// Defined by neon/dequant_neon.cpp.
template <>
DequantTable own_kernels<Isa::neon>();

}  // namespace ck::kernels
