// Dequantization kernels: one function per ggml type, one table per instruction set.
// Every variant is bit-identical to the scalar reference, which is bit-identical to ggml's
// own to_float (docs/formats/quantization.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"

namespace ck::kernels {

// Dequantizes n elements (a multiple of the type's block size) from their blocks.
using DequantFn = void (*)(const std::byte* blocks, float* out, std::size_t n);

struct DequantTable {
    Isa isa = Isa::scalar;
    std::array<DequantFn, ggml_type_count> fn{};  // nullptr: no kernel for that type
};

// The scalar reference: every type ggml can dequantize (and F32 as a copy).
const DequantTable& scalar_dequant_table();
// The table for `isa` exactly (entries it does not specialise come from the scalar table).
// Calling it for an ISA the CPU lacks is the caller's mistake; use select_dequant_table().
const DequantTable& dequant_table(Isa isa);
// The best table not above `limit` that this CPU runs.
const DequantTable& select_dequant_table(Isa limit);
// The table a plugin uses: the best one this CPU runs within --isa / CKHOST_ISA
// (ck::selected_isa()), chosen on the first call and kept. Call it when the plugin is loaded
// (in ckhost_plugin_descriptor) so the choice never happens mid-conversion. ckkernels is a
// static library, so each plugin has its own choice.
const DequantTable& plugin_dequant_table();
// The name of that table's variant ("avx2"), for the descriptor's kernel_variant.
const char* plugin_dequant_variant();
// Which types a variant implements itself (rather than borrowing the scalar kernel).
bool has_own_kernel(Isa isa, std::uint32_t type);

}  // namespace ck::kernels
