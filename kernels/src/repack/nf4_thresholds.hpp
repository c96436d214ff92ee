// The NF4 nearest-entry rule turned into 15 thresholds, computed at compile time.
//
// docs/formats/repack-blocks.md defines the index of x as the codebook entry j minimising
// |codebook[j] - x| in f32, ties to the higher index. Between two neighbours c_j < c_j+1 both
// rounded distances are monotonic in x, so "c_j+1 is at least as close as c_j" holds exactly from
// some float t_j upwards; no other entry can win or tie there (it is farther by at least 0.08, far
// more than the rounding of a distance below 2). So the index is the number of thresholds t_j <= x:
// no subtraction, no tie logic, the same compare in every variant, and NaN (no compare succeeds)
// gives 0, exactly as the literal scan does. tests/kernels/test_repack_encoders.cpp checks the
// equivalence around every threshold.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "ck/kernels/repack.hpp"

namespace ck::kernels::nf4 {
// Internal linkage: this header is compiled into the scalar and the SIMD translation units, and
// an inline function with external linkage could reach baseline code compiled for AVX.
namespace {

// Float bits mapped to an unsigned key that orders like the floats (for a bisection over them).
constexpr std::uint32_t ordered_key(float x) {
    const auto bits = std::bit_cast<std::uint32_t>(x);
    return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

constexpr float from_ordered_key(std::uint32_t key) {
    return std::bit_cast<float>((key & 0x80000000u) ? key & 0x7fffffffu : ~key);
}

constexpr float distance(float a, float b) {
    const float d = a - b;
    return d < 0 ? -d : d;
}

// The smallest float x in [c_j, c_j+1] for which c_j+1 is at least as close as c_j.
constexpr float threshold(int j) {
    const float low = nf4_codebook[j], high = nf4_codebook[j + 1];
    std::uint32_t fails = ordered_key(low), holds = ordered_key(high);
    while (holds - fails > 1) {
        const std::uint32_t mid = fails + (holds - fails) / 2;
        const float x = from_ordered_key(mid);
        if (distance(high, x) <= distance(low, x))
            holds = mid;
        else
            fails = mid;
    }
    return from_ordered_key(holds);
}

// thresholds[j] separates entry j from entry j + 1; entry 15 pads a 16-lane table.
inline constexpr std::array<float, 16> thresholds = [] {
    std::array<float, 16> t{};
    for (int j = 0; j < 15; ++j) t[j] = threshold(j);
    t[15] = std::bit_cast<float>(0x7f800000u);  // +infinity: never reached by the search
    return t;
}();

// Branch-free binary search over the thresholds (the SIMD variants do the same per lane).
inline std::uint32_t index_of(float x) {
    std::uint32_t i = 0;
    i += x >= thresholds[i + 7] ? 8 : 0;
    i += x >= thresholds[i + 3] ? 4 : 0;
    i += x >= thresholds[i + 1] ? 2 : 0;
    i += x >= thresholds[i] ? 1 : 0;
    return i;
}

}  // namespace
}  // namespace ck::kernels::nf4
