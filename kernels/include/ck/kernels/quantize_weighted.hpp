// Quantizers with importance weights, bit-identical to what llama-quantize writes with an
// importance matrix: ggml's quantize_<type>(src, dst, nrow = 1, n_per_row = n, quant_weights)
// for one row. `weights` holds n values, the importance of each column of the row (the imatrix
// entry of the tensor, or of the row's expert); nullptr quantizes as ggml does without an
// imatrix (for the K-quants and the legacy types that is the reference quantizer of
// quantize.hpp; the IQ types have their own unweighted search).
//
// n is a multiple of the type's block size (32 for Q4_0..Q5_1 and IQ4_NL, 256 for the rest).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ck/cpu.hpp"

namespace ck::kernels {

using WeightedQuantizeRowFn = void (*)(const float* x, std::byte* out, std::size_t n,
                                       const float* weights);

// The quantizer of ggml type `type`, or nullptr when ckhost has none. The IQ1/IQ2/IQ3 grids and
// their neighbour tables are built on the first call for their type (thread-safe).
WeightedQuantizeRowFn weighted_quantizer(std::uint32_t type);

// The types ggml refuses to quantize without weights (ggml_quantize_requires_imatrix): IQ2_XXS,
// IQ2_XS and IQ1_S. Their quantizers must not be called with weights == nullptr.
bool quantizer_requires_weights(std::uint32_t type);

// Whether each block of a row is quantized from its own values and weights alone, so that rows
// may be concatenated into one call (each beside its weights) with the same bytes. False for
// Q4_0, Q4_1, Q5_0 and Q5_1, whose weighted search scales the weights by the whole row's mean
// square: call those one row at a time.
bool weighted_blocks_are_independent(std::uint32_t type);

// SIMD variants (src/avx2, src/avx512), byte-identical to the functions above; a type a variant
// has no own function for gets the scalar one.
// The quantizer for `type` in variant `isa` (calling it for an ISA the CPU lacks is the caller's
// mistake); whether `isa` has its own; and the fastest this CPU runs within --isa / CKHOST_ISA
// (ck::selected_isa()), chosen on the first call and kept.
WeightedQuantizeRowFn weighted_quantizer(Isa isa, std::uint32_t type);
bool has_own_weighted_quantizer(Isa isa, std::uint32_t type);
WeightedQuantizeRowFn best_weighted_quantizer(std::uint32_t type);

// The three families, each in its own file under src/scalar/ (nullptr for a type not theirs).
namespace scalar {
WeightedQuantizeRowFn weighted_kquant_or_legacy(std::uint32_t type);  // Q2_K..Q6_K, Q4_0..Q5_1
WeightedQuantizeRowFn weighted_iq1_iq2(std::uint32_t type);           // IQ1_S, IQ1_M, IQ2_XXS/XS/S
WeightedQuantizeRowFn weighted_iq3_iq4(std::uint32_t type);  // IQ3_XXS, IQ3_S, IQ4_NL, IQ4_XS
}  // namespace scalar

}  // namespace ck::kernels
