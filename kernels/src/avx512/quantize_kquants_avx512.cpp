// AVX-512 quantizers (Q2_K..Q6_K, IQ4_NL), 16 blocks at once, one per lane:
// quantize_kquants_lanes.inc compiled with this ISA's flags but without -mfma (nothing may be
// fused; the library also adds -ffp-contract=off).
#define CK_SIMD_FLOAT_LANES 16

#include "../quantize_kquants_lanes.inc"
