// The spec's quantizers and dequantizers for GGUF-lite's two quantized dtypes, one row at a
// time. The writer quantizes (and, for the round-trip check, computes its fake quantization
// from the integer values before they are packed); the reader and the check decode the packed
// bytes. Both sides compute w' = q * f32(s), a product that is exact in f32, so the two agree
// bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ck/cpu.hpp"

#include "gguflite_format.hpp"

namespace ckplugin::gguflite {
using namespace ck;

// Q8_per_channel, one row of `cols` weights: returns the f16 scale s = f16(absmax / 127) and
// stores q = clamp(round_half_even(w / s), -127, 127) (0 when s == 0). When `fake` is not
// null it receives q * f32(s).
using QuantizeQ8Fn = std::uint16_t (*)(const float* w, std::size_t cols, std::int8_t* q,
                                       float* fake);
// Q4_per_group_64, one row of `cols` weights (a multiple of 64): cols / 64 f16 scales
// s = f16(absmax(group) / 7) and cols / 2 bytes, the even element in the low nibble.
using QuantizeQ4Fn = void (*)(const float* w, std::size_t cols, std::uint16_t* scales,
                              std::uint8_t* packed, float* fake);

// One variant of the quantizers. Every variant gives the same bytes as the scalar reference.
struct Quantizers {
    Isa isa = Isa::scalar;
    QuantizeQ8Fn q8 = nullptr;
    QuantizeQ4Fn q4 = nullptr;
};
const Quantizers& scalar_quantizers();
// The best variant this CPU runs, not above `limit` (AVX2 when it is there, else scalar).
const Quantizers& select_quantizers(Isa limit);
// select_quantizers(selected_isa()), chosen on first use.
const Quantizers& quantizers();

inline std::uint16_t quantize_q8_row(const float* w, std::size_t cols, std::int8_t* q,
                                     float* fake) {
    return quantizers().q8(w, cols, q, fake);
}
inline void quantize_q4_row(const float* w, std::size_t cols, std::uint16_t* scales,
                            std::uint8_t* packed, float* fake) {
    quantizers().q4(w, cols, scales, packed, fake);
}

// Decoding. Scales are read from raw little-endian bytes (GGUF-lite has no alignment).
void dequantize_q8_row(const std::byte* scale, const std::byte* values, std::size_t cols,
                       float* out);
void dequantize_q4_row(const std::byte* scales, const std::byte* packed, std::size_t cols,
                       float* out);

// `count` consecutive rows of a Q8/Q4 tensor: `scales` and `values` point at the first row's
// scales and values inside the tensor's two sections.
void dequantize_rows(Dtype dtype, const QuantLayout& layout, const std::byte* scales,
                     const std::byte* values, std::uint64_t count, float* out);

// The largest |w| of n floats, NaN ignored (0 when every value is NaN or n is 0).
float absmax(const float* w, std::size_t n);

}  // namespace ckplugin::gguflite
