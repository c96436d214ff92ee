// NEON weighted quantizers (with importance weights: Q2_K..Q6_K, Q4_0..Q5_1, IQ4_NL, IQ4_XS),
// one block per lane: quantize_weighted_lanes.inc over GCC's generic vectors of 8 floats, as
// quantize_kquants_neon.cpp. The IQ1/IQ2/IQ3 grid searches (quantize_grid_lanes.inc) are written
// with x86 intrinsics and keep their scalar kernels here (docs/platforms.md).
#define CK_SIMD_NEON 1
#define CK_SIMD_FLOAT_LANES 8

#include "../quantize_weighted_lanes.inc"
