// Reference quantizers, bit-identical to ggml's quantize_row_*_ref.
#pragma once

#include <cstddef>

namespace ck::kernels {

// n is a multiple of 32; out receives n/32 blocks (34 bytes for Q8_0, 18 for Q4_0).
void quantize_row_q8_0(const float* x, std::byte* out, std::size_t n);
void quantize_row_q4_0(const float* x, std::byte* out, std::size_t n);

}  // namespace ck::kernels
