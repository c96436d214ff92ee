// The repack tables of the SIMD translation units. They are compiled with their ISA's flags,
// so they may only be called once the CPU is known to support that ISA (repack_dispatch.cpp).
#pragma once

#include "ck/kernels/repack.hpp"

namespace ck::kernels {

RepackTable avx2_repack_table();
RepackTable avx512_repack_table();

}  // namespace ck::kernels
