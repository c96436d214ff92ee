// The LoRA product kernels each unit provides (lora_lanes.inc): the scalar reference
// (lora_dispatch.cpp) and the AVX2 and AVX-512 builds of the same loops.
#pragma once

#include "ck/kernels/lora.hpp"

namespace ck::kernels {

// Compiled with their ISA's flags: call them only once the CPU is known to run that ISA.
template <Isa isa>
LoraTable own_lora_kernels();
template <>
LoraTable own_lora_kernels<Isa::scalar>();
template <>
LoraTable own_lora_kernels<Isa::avx2>();
template <>
LoraTable own_lora_kernels<Isa::avx512>();

}  // namespace ck::kernels
