// ggml's constant tables for the grid-based i-quants, defined in iq_grids.cpp (ggml data, MIT
// licence, ggml/src/ggml-common.h; names kept as in ggml so the kernels read like the original).
//
// A grid entry packs 8 (u64) or 4 (u32) unsigned magnitudes, one per byte, element 0 in the
// lowest byte. IQ1S grid bytes are int8 values -1, 0, +1.
#pragma once

#include <cstdint>

namespace ck::kernels::scalar {

// Bit j of a sign byte negates element j of an 8-element group.
extern const std::uint8_t kmask_iq2xs[8];
// 7 stored sign bits -> 8 sign bits; the 8th makes the number of negatives even.
extern const std::uint8_t ksigns_iq2xs[128];

extern const std::uint64_t iq2xxs_grid[256];
extern const std::uint64_t iq2xs_grid[512];
extern const std::uint64_t iq2s_grid[1024];
extern const std::uint32_t iq3xxs_grid[256];
extern const std::uint32_t iq3s_grid[512];
extern const std::uint64_t iq1s_grid[2048];

// Offset added to every IQ1_S / IQ1_M grid value (its sign comes from the block; ggml uses this
// one constant for both types).
inline constexpr float IQ1S_DELTA = 0.125f;

}  // namespace ck::kernels::scalar
