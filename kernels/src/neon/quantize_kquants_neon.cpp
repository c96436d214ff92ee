// NEON quantizers (Q2_K, Q4_K, Q5_K), 8 blocks at once, one per lane: quantize_kquants_lanes.inc
// compiled over GCC's generic vectors of 8 floats, which GCC turns into pairs of 128-bit NEON
// instructions (simd_width.hpp). Nothing is fused: the library adds -ffp-contract=off. Q3_K, Q6_K
// and IQ4_NL are left out there: their lanes execute more instructions than the scalar search.
#define CK_SIMD_NEON 1
#define CK_SIMD_FLOAT_LANES 8

#include "../quantize_kquants_lanes.inc"
