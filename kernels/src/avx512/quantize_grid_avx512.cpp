// AVX-512 scale searches of the grid quantizers (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), 16
// candidates or neighbours at once: quantize_grid_lanes.inc compiled with this ISA's flags but
// without -mfma (nothing may be fused; the library also adds -ffp-contract=off).
#define CK_SIMD_FLOAT_LANES 16

#include "../quantize_grid_lanes.inc"
