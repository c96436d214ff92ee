// AVX-512 (F, BW, DQ, VL) dequantization kernels: simd_dequant_blocks.inc compiled with this ISA's
// flags (kernels/CMakeLists.txt) over 16-lane registers.
#define CK_SIMD_FLOAT_LANES 16

#include "../simd_dequant_blocks.inc"
