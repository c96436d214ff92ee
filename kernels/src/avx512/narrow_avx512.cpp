// AVX-512 (F/BW/DQ/VL) f32 -> f16 / bf16 narrowing kernels: simd_narrow.inc compiled with this
// ISA's flags (kernels/CMakeLists.txt) over 16-lane registers.
#define CK_SIMD_FLOAT_LANES 16

#include "../simd_narrow.inc"
