// AVX2 quantizers with importance weights (Q2_K..Q6_K, IQ4_NL, IQ4_XS), 8 blocks of a row at
// once, one per lane: quantize_weighted_lanes.inc compiled with this ISA's flags but without
// -mfma (nothing may be fused; the library also adds -ffp-contract=off).
#define CK_SIMD_FLOAT_LANES 8

#include "../quantize_weighted_lanes.inc"
