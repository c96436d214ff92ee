// AVX2 (+F16C) f32 -> f16 / bf16 narrowing kernels: simd_narrow.inc compiled with this ISA's flags
// (kernels/CMakeLists.txt) over 8-lane registers.
#define CK_SIMD_FLOAT_LANES 8

#include "../simd_narrow.inc"
