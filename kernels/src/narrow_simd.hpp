// The narrowing kernels each SIMD translation unit provides (simd_narrow.inc), and the baseline
// reference they hand the rare vectors holding a NaN to.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ck/kernels/narrow.hpp"

namespace ck::kernels {

// Baseline code (narrow_dispatch.cpp), the scalar reference's entries: the SIMD units call them
// for NaN payloads and for the last few values, and so never repeat the reference's rules.
void scalar_narrow_to_f16(const float* in, std::uint16_t* out, std::size_t n);
void scalar_narrow_to_bf16(const float* in, std::uint16_t* out, std::size_t n);

// Compiled with their ISA's flags: call them only once the CPU is known to run that ISA.
template <Isa isa>
NarrowTable own_narrow_kernels();
// Defined by narrow_avx2.cpp and narrow_avx512.cpp.
template <>
NarrowTable own_narrow_kernels<Isa::avx2>();
template <>
NarrowTable own_narrow_kernels<Isa::avx512>();
// Defined by neon/narrow_neon.cpp.
template <>
NarrowTable own_narrow_kernels<Isa::neon>();

}  // namespace ck::kernels
