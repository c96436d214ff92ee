// Rounding f32 values to the 16-bit float formats, many at a time: one table per instruction
// set, like the dequantizers. Every variant gives the scalar reference's bits for every input
// (float_convert.hpp's f32_to_f16_numpy and f32_to_bf16), NaN payloads included.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"

namespace ck::kernels {

// Rounds n floats to the bits of a 16-bit float type, stored little-endian as tensor bytes hold
// them (on a big-endian host `out[i]` is not the host-order value). `in` and `out` may have any
// alignment.
using NarrowFn = void (*)(const float* in, std::uint16_t* out, std::size_t n);

struct NarrowTable {
    Isa isa = Isa::scalar;
    NarrowFn to_f16 = nullptr;   // f32_to_f16_numpy: what llama.cpp's converters write
    NarrowFn to_bf16 = nullptr;  // f32_to_bf16: ggml's and gguf-py's rounding
};

// The scalar reference.
const NarrowTable& scalar_narrow_table();
// The table for `isa` exactly: calling it for an ISA the CPU lacks is the caller's mistake.
const NarrowTable& narrow_table(Isa isa);
// The best table not above `limit` that this CPU runs.
const NarrowTable& select_narrow_table(Isa limit);
// The table a plugin uses, chosen on the first call within --isa / CKHOST_ISA and kept, as
// plugin_dequant_table() is: call it when the plugin is loaded.
const NarrowTable& plugin_narrow_table();

// Values dequantize_and_narrow converts at a time: 8 KiB of f32, which stays in the L1 cache
// between the two kernels. A multiple of every ggml block (at most 256 values).
inline constexpr std::size_t narrow_scratch_elements = 2048;

// Dequantizes n values (whole blocks of `type`) from `blocks` with `dequant` and rounds them
// to `out` with `narrow`, narrow_scratch_elements at a time through an f32 buffer on the stack:
// a 16-bit target never stages a whole tensor as f32.
void dequantize_and_narrow(DequantFn dequant, NarrowFn narrow, const TypeInfo& type,
                           const std::byte* blocks, std::uint16_t* out, std::size_t n);

}  // namespace ck::kernels
