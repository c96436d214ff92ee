// Repacking kernels: ggml blocks -> web-rwkv's Int8 and NF4 layouts
// (docs/formats/repack-blocks.md), one table per instruction set like the dequantizers. Every
// variant produces the same bytes as the scalar reference, and the same accuracy figures, bit for
// bit.
//
//   Int8: 128-element blocks; codes u8, one (min, max) f16 pair per block;
//         y = (q / 255) * (max - min) + min
//   NF4:  64-element blocks; 4-bit indices into nf4_codebook, element 2j in the low nibble of
//         byte j and 2j+1 in its high nibble; one absmax f16 per block; y = codebook[i] * absmax
//
// Elements are blocked in flat order (row-major, never transposed).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"

namespace ck::kernels {

enum class RepackTarget { int8, nf4 };

inline constexpr std::size_t int8_block_elements = 128;
inline constexpr std::size_t nf4_block_elements = 64;

// NormalFloat4 (QLoRA), ascending: the values web-rwkv's NF4 matrices decode to.
inline constexpr std::array<float, 16> nf4_codebook = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

// Accuracy of a repack against the exactly dequantized source, accumulated as it runs. Per
// slice of 1024 elements the sums are taken in 16 f32 lanes (element i in lane i % 16) and
// reduced in a fixed order, so every variant reports exactly the same figures (and a caller
// that repacks in pieces gets the same figures when its pieces are multiples of 1024).
struct RepackError {
    double squared_error = 0;   // sum of (decoded - source)^2
    double squared_source = 0;  // sum of source^2
    float max_abs_error = 0;    // NaN errors (from NaN or infinite sources) are left out
    std::uint64_t elements = 0;

    void add(const RepackError& other);
    // sqrt(squared_error / squared_source): 0 for an exact repack of an all-zero tensor.
    double relative_rms() const;
};

inline constexpr std::size_t repack_slice_elements = 1024;

// Repacks n elements of ggml type `from` (n a multiple of the source block size and of the
// target block): `codes` receives n bytes (Int8) or n/2 (NF4), `scales` the f16 bits of
// n/128 (min, max) pairs (Int8) or n/64 absmax values (NF4). Accumulates into `error`.
using RepackFn = void (*)(const std::byte* source, std::size_t n, std::uint8_t* codes,
                          std::uint16_t* scales, RepackError& error);

struct RepackTable {
    Isa isa = Isa::scalar;
    std::array<RepackFn, ggml_type_count> to_int8{};  // Q8_0, Q4_K, Q5_K, Q6_K, F32, F16, BF16
    std::array<RepackFn, ggml_type_count> to_nf4{};   // Q4_0, F32, F16, BF16

    // nullptr when there is no path from `type` to `target`.
    RepackFn find(std::uint32_t type, RepackTarget target) const {
        if (type >= ggml_type_count) return nullptr;
        return target == RepackTarget::int8 ? to_int8[type] : to_nf4[type];
    }
};

const RepackTable& scalar_repack_table();
// The table for `isa` exactly; only for an ISA this CPU runs (use select_repack_table()).
const RepackTable& repack_table(Isa isa);
// The best table not above `limit` that this CPU runs.
const RepackTable& select_repack_table(Isa limit);
// The repack table a plugin uses, chosen once like plugin_dequant_table(), and its name.
const RepackTable& plugin_repack_table();
const char* plugin_repack_variant();

// Elements per block of `target`, and the output sizes for n elements.
constexpr std::size_t block_elements(RepackTarget target) {
    return target == RepackTarget::int8 ? int8_block_elements : nf4_block_elements;
}
constexpr std::size_t code_bytes(RepackTarget target, std::size_t n) {
    return target == RepackTarget::int8 ? n : n / 2;
}
constexpr std::size_t scale_count(RepackTarget target, std::size_t n) {
    return target == RepackTarget::int8 ? n / int8_block_elements * 2 : n / nf4_block_elements;
}

// The formulas of docs/formats/repack-blocks.md for one block, written plainly: the definition the
// tables are tested against.
//
// Int8: mn = f16(min v), mx = f16(max v), widened; q = round_half_away(clamp((v - mn) /
// (mx - mn), 0, 1) * 255) when mx > mn, else 0. NaN elements take no part in min/max and
// encode as 0; a zero min or max is stored as +0.
void encode_int8_block(const float* values, std::uint8_t* codes, std::uint16_t* min_max);
float decode_int8(std::uint8_t code, std::uint16_t min_bits, std::uint16_t max_bits);
// NF4: a = f16(max |v|), widened; index of the codebook entry nearest to v / a (ties to the
// higher index), or 7 (0.0) for every element when a == 0. NaN elements take no part in the
// absmax.
void encode_nf4_block(const float* values, std::uint8_t* packed, std::uint16_t* absmax);
float decode_nf4(std::uint8_t index, std::uint16_t absmax_bits);
// The codebook entry nearest to x comparing |codebook[j] - x| in f32, ties to the higher
// index; 0 for NaN (no comparison succeeds).
std::uint8_t nf4_nearest(float x);

}  // namespace ck::kernels
