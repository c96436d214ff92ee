// AVX-512 build of the LoRA product kernel (lora_lanes.inc): 16 columns per register.
#define CK_SIMD_FLOAT_LANES 16
#define CK_LORA_ISA Isa::avx512

#include "../lora_lanes.inc"
