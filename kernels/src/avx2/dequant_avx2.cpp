// AVX2 (+F16C) dequantization kernels: simd_dequant_blocks.inc compiled with this ISA's
// flags (kernels/CMakeLists.txt) over 8-lane registers.
#define CK_SIMD_FLOAT_LANES 8

#include "../simd_dequant_blocks.inc"
