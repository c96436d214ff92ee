// AVX2 + FMA build of the LoRA product kernel (lora_lanes.inc): 8 columns per register.
#define CK_SIMD_FLOAT_LANES 8
#define CK_LORA_ISA Isa::avx2

#include "../lora_lanes.inc"
