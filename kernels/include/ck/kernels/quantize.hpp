// Reference quantizers, bit-identical to what llama-quantize writes without an importance matrix:
// ggml's quantize_row_*_ref, except IQ4_NL, where ggml_quantize_chunk's quantize_iq4_nl (scale
// search over 15 candidates) is what reaches the file rather than the _ref function's single
// guess. Each takes n floats, n a multiple of the type's block size (32, or 256 for the K-quants
// and TQ types), and writes n / block_size blocks in ggml's layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ck/cpu.hpp"

namespace ck::kernels {

// F32 -> F16 / BF16 rows as ggml converts them (round to nearest even), any n.
void quantize_row_f16(const float* x, std::byte* out, std::size_t n);
void quantize_row_bf16(const float* x, std::byte* out, std::size_t n);

// Blocks of 32 (src/scalar/quantize.cpp, quantize_legacy.cpp).
void quantize_row_q8_0(const float* x, std::byte* out, std::size_t n);
void quantize_row_q4_0(const float* x, std::byte* out, std::size_t n);
void quantize_row_q4_1(const float* x, std::byte* out, std::size_t n);
void quantize_row_q5_0(const float* x, std::byte* out, std::size_t n);
void quantize_row_q5_1(const float* x, std::byte* out, std::size_t n);
void quantize_row_iq4_nl(const float* x, std::byte* out, std::size_t n);

// Blocks of 256 (src/scalar/quantize_legacy.cpp: the ternary types).
void quantize_row_tq1_0(const float* x, std::byte* out, std::size_t n);
void quantize_row_tq2_0(const float* x, std::byte* out, std::size_t n);

// Blocks of 256: the K-quants (src/scalar/quantize_kquants.cpp).
void quantize_row_q2_K(const float* x, std::byte* out, std::size_t n);
void quantize_row_q3_K(const float* x, std::byte* out, std::size_t n);
void quantize_row_q4_K(const float* x, std::byte* out, std::size_t n);
void quantize_row_q5_K(const float* x, std::byte* out, std::size_t n);
void quantize_row_q6_K(const float* x, std::byte* out, std::size_t n);

using QuantizeRowFn = void (*)(const float* x, std::byte* out, std::size_t n);
// The function above that writes ggml type `type`, or nullptr when there is none.
QuantizeRowFn reference_quantizer(std::uint32_t type);

// SIMD variants (src/avx2, src/avx512: one block per lane), byte-identical to the reference
// above: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (256-value blocks) and IQ4_NL (32-value blocks). Rows
// whose block count is not a multiple of the lane count (8 or 16) finish with the reference
// function.
//
// The quantizer for `type` in variant `isa`: the variant's own function where it has one,
// otherwise reference_quantizer(type). Calling it for an ISA the CPU lacks is the caller's
// mistake; use select_quantizer().
QuantizeRowFn quantizer(Isa isa, std::uint32_t type);
// Whether `isa` has its own quantizer for `type` (for Isa::scalar: whether there is one at all).
bool has_own_quantizer(Isa isa, std::uint32_t type);
// The quantizer of the best variant not above `limit` that this CPU runs.
QuantizeRowFn select_quantizer(std::uint32_t type, Isa limit);
// What a plugin should call: the fastest variant this CPU runs within --isa / CKHOST_ISA
// (ck::selected_isa()), chosen on the first call and kept; nullptr when reference_quantizer
// has nothing for `type`.
QuantizeRowFn best_quantizer(std::uint32_t type);
// The name of that variant ("avx512"), for a plugin's kernel_variant.
const char* best_quantizer_variant();

}  // namespace ck::kernels
