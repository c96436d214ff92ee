// The kernels each SIMD translation unit provides itself. Entries left null fall back to the
// scalar reference. These functions are compiled with their ISA's flags, so they may only be
// called once the CPU is known to support that ISA.
#pragma once

#include "ck/kernels/dequant.hpp"

namespace ck::kernels {

DequantTable avx2_own_kernels();
DequantTable avx512_own_kernels();

}  // namespace ck::kernels
