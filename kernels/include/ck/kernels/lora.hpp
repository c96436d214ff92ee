// A LoRA adapter's product added to a weight's rows in float32, value for value as
// llama-export-lora computes it: its ggml graph `cur = W + (B A) * scale` run by the CPU backend
// of the reference build (llama.cpp's lora README, "Numbers"). One table per instruction set, like
// the dequantizers; every variant gives the scalar reference's bits.
#pragma once

#include <cstddef>

#include "ck/cpu.hpp"

namespace ck::kernels {

// How ggml adds up the rank terms of one value of the product (docs/formats/lora.md):
enum class LoraSum {
    // llamafile's tinyBLAS, which ggml's F32 matrix product takes when the rank is a multiple of
    // 16, the columns a multiple of 4 and there are 2 rows at least: lane j sums terms j, j + 16,
    // ... by fused multiply-add from +0, then the 16 lanes pairwise (j + j+8, j + j+4, j + j+2,
    // 0 + 1) as _mm512_reduce_add_ps adds them.
    tiled,
    // ggml_vec_dot_f32 otherwise: for a rank of 64 or more, 64 lanes by fused multiply-add over
    // the first multiple of 64 terms, reduced 4 x 16 lanes pairwise; then the remaining terms in
    // order, each product rounded before it is added, but the last (remaining % 8) fused.
    in_order,
};

// Which sum ggml takes for a product of `rank` terms with `columns` columns and `rows` rows.
inline LoraSum ggml_lora_sum(std::size_t rank, std::size_t columns, std::size_t rows) {
    return rank % 16 == 0 && columns % 4 == 0 && rows >= 2 ? LoraSum::tiled : LoraSum::in_order;
}

// out[i][c] = fl32(fl32(dot(i, c) * scale) + out[i][c]) for rows i < `rows`, columns c <
// `columns`, where dot(i, c) adds the terms by_row[i * rank + k] * by_column[k * columns + c],
// k < rank, as `sum` says. For a weight W [out, in] and an adapter's B [out, r] and A [r, in],
// by_row is B's rows and by_column is A; for token_embd (whose lora_a is stored transposed),
// by_row is lora_a's rows and by_column is lora_b transposed.
using LoraAddFn = void (*)(const float* by_row, const float* by_column, std::size_t rank,
                           std::size_t columns, std::size_t rows, LoraSum sum, float scale,
                           float* out);

struct LoraTable {
    Isa isa = Isa::scalar;
    LoraAddFn add = nullptr;
};

// The scalar reference.
const LoraTable& scalar_lora_table();
// The table for `isa` exactly: calling it for an ISA the CPU lacks is the caller's mistake.
const LoraTable& lora_table(Isa isa);
// The best table not above `limit` that this CPU runs.
const LoraTable& select_lora_table(Isa limit);
// The table a plugin uses, chosen on the first call within --isa / CKHOST_ISA and kept: call it
// when the plugin is loaded.
const LoraTable& plugin_lora_table();

}  // namespace ck::kernels
