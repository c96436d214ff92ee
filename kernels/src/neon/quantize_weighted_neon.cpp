// NEON weighted quantizers (with importance weights: Q2_K, Q4_K, Q5_K), one block per lane:
// quantize_weighted_lanes.inc over GCC's generic vectors of 8 floats, as
// quantize_kquants_neon.cpp; that file leaves out the types whose lanes execute more
// instructions than their scalar search (Q3_K, Q6_K, IQ4_NL, IQ4_XS). The IQ1/IQ2/IQ3 grid searches
// (quantize_grid_lanes.inc) are written with x86 intrinsics and keep their scalar kernels here
// (docs/platforms.md).
#define CK_SIMD_NEON 1
#define CK_SIMD_FLOAT_LANES 8

#include "../quantize_weighted_lanes.inc"
