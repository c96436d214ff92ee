// F32 -> Q4_1, Q5_0, Q5_1, IQ4_NL, TQ1_0, TQ2_0 exactly as ggml's reference quantizers.
//
// Byte-exact means more than "same formula": the same float operations in the same order
// (x * id, never x / d; (x - min) * id; the +0.5 before the truncation), the same comparisons
// in the min/max scans (strict, so the first of equal candidates wins), and the same f16
// rounding of the stored scales. The library is built with -ffp-contract=off, like ggml's
// reference, so no multiply-add is fused behind our back.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "block_bytes.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/support/little_endian.hpp"
#include "iq4nl_search.hpp"

namespace ck::kernels {
namespace {

constexpr std::size_t block32 = 32;
constexpr std::size_t block256 = 256;

using scalar::for_each_block_encoded;
using scalar::inverse_scale;
using scalar::store_half;

void store_u32(std::byte* out, std::uint32_t v) {
    // ggml memcpy's the host-order uint32_t; GGUF files are little-endian whatever the host.
    ck::le::store(out, v);
}

// ggml converts with a C cast, `(int8_t)(v)` or `(uint8_t)(v)`, which x86-64 compilers emit as
// a truncating conversion to a 32-bit int (0x80000000 for NaN and out-of-range values) whose
// low byte is kept. In C++ a float outside the int range is undefined behaviour, so spell that
// out; for every finite input the quantizers produce, this is a plain truncation.
inline std::int32_t truncate_like_x86(float v) {
    const bool in_range = v >= -2147483648.0f && v < 2147483648.0f;  // false for NaN
    return in_range ? static_cast<std::int32_t>(v) : INT32_MIN;
}

// The low byte of that conversion, as (int8_t) would keep it (C++20: modular).
inline int low_int8(float v) {
    return static_cast<std::int8_t>(truncate_like_x86(v));
}

// Min and max of a block with ggml's scan: start from +-FLT_MAX and replace on strict < / >.
inline void block_min_max(const float* x, std::size_t n, float& min, float& max) {
    min = FLT_MAX;
    max = -FLT_MAX;
    for (std::size_t j = 0; j < n; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
}

// The value of largest magnitude, sign kept; the first one wins a tie (strict <).
inline float block_signed_absmax(const float* x, std::size_t n) {
    float amax = 0.0f, max = 0.0f;
    for (std::size_t j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

// Q4_1 / Q5_1: d = (max - min) / levels and the min, stored as f16 at the block's start; the
// codes use the f32 min and 1/d, as ggml's do.
struct AffineScale {
    float min, id;
};
inline AffineScale store_affine_scale(const float* x, float levels, std::byte* out) {
    float min, max;
    block_min_max(x, block32, min, max);
    const float d = (max - min) / levels;
    store_half(out, d);
    store_half(out + 2, min);
    return {min, inverse_scale(d)};
}

// Q5_0 / Q5_1 codes (0..31) of elements j and j + 16: the low nibbles into byte j of qs, the
// fifth bits into bits j and j + 16 of qh.
inline void pack_five_bit_pair(std::uint8_t q0, std::uint8_t q1, std::size_t j, std::uint8_t* qs,
                               std::uint32_t& qh) {
    qs[j] = static_cast<std::uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
    qh |= static_cast<std::uint32_t>((q0 >> 4) & 1) << j;
    qh |= static_cast<std::uint32_t>((q1 >> 4) & 1) << (j + block32 / 2);
}

// ---------------------------------------------------------------------------------------------
// Ternary types.

// ggml writes the trit as `lroundf(x * id) + 1`, kept in the low bits of an int. With
// d = max |x| and id = 1/d, |x * id| never exceeds 1 by more than an ulp, so for finite values
// lroundf (halves away from zero) is exactly: >= 0.5 -> 1, <= -0.5 -> -1, else 0. The other
// cases: NaN (0 * inf, inf * 0) and +-inf (x * id when 1/d overflowed for a subnormal d) make
// glibc's lroundf return LONG_MIN on x86-64, whose low bits are 0, so ggml stores the trit 1
// ("zero") for them; the ranges below do the same without calling libm.
inline unsigned ternary_code(float v) {
    if (v >= 0.5f && v < 1.5f) return 2;
    if (v <= -0.5f && v > -1.5f) return 0;
    return 1;
}

// ggml's MAX(amax, |x|) macro, (a > b ? a : b), operand order kept: a NaN makes it NaN.
inline float ternary_scale(const float* x) {
    float amax = 0.0f;
    for (std::size_t j = 0; j < block256; ++j) {
        const float a = std::fabs(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax;
}

// Five trits t0..t4 (t0 most significant) as the base-3 number q < 243, then mapped onto a
// byte as ceil(q * 256 / 243), so the dequantizer can pull trit k out as
// ((uint8_t)(byte * 3^k) * 3) >> 8.
inline std::uint8_t pack_trits(unsigned q) {
    return static_cast<std::uint8_t>((q * 256 + 242) / 243);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

void quantize_row_q4_1(const float* x, std::byte* out, std::size_t n) {
    // block_q4_1: f16 d, f16 m, 16 bytes of nibbles (element j low, j + 16 high).
    for_each_block_encoded<block32, 20>(x, out, n, [](const float* v, std::byte* block) {
        const AffineScale s = store_affine_scale(v, 15.0f, block);
        std::uint8_t qs[block32 / 2];
        for (std::size_t j = 0; j < block32 / 2; ++j) {
            const int q0 = std::min(15, low_int8((v[j] - s.min) * s.id + 0.5f));
            const int q1 = std::min(15, low_int8((v[block32 / 2 + j] - s.min) * s.id + 0.5f));
            qs[j] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(q0) | (q1 << 4));
        }
        std::memcpy(block + 4, qs, sizeof qs);
    });
}

void quantize_row_q5_0(const float* x, std::byte* out, std::size_t n) {
    // block_q5_0: f16 d, u32 qh (bit j: fifth bit of element j), 16 bytes of low nibbles.
    for_each_block_encoded<block32, 22>(x, out, n, [](const float* v, std::byte* block) {
        // As Q4_0: the signed extreme maps to -16 exactly.
        const float d = block_signed_absmax(v, block32) / -16.0f;
        const float id = inverse_scale(d);
        store_half(block, d);
        std::uint32_t qh = 0;
        std::uint8_t qs[block32 / 2];
        for (std::size_t j = 0; j < block32 / 2; ++j) {
            const auto q0 = static_cast<std::uint8_t>(std::min(31, low_int8(v[j] * id + 16.5f)));
            const auto q1 =
                static_cast<std::uint8_t>(std::min(31, low_int8(v[block32 / 2 + j] * id + 16.5f)));
            pack_five_bit_pair(q0, q1, j, qs, qh);
        }
        store_u32(block + 2, qh);
        std::memcpy(block + 6, qs, sizeof qs);
    });
}

void quantize_row_q5_1(const float* x, std::byte* out, std::size_t n) {
    // block_q5_1: f16 d, f16 m, u32 qh, 16 bytes of low nibbles.
    for_each_block_encoded<block32, 24>(x, out, n, [](const float* v, std::byte* block) {
        const AffineScale s = store_affine_scale(v, 31.0f, block);
        std::uint32_t qh = 0;
        std::uint8_t qs[block32 / 2];
        for (std::size_t j = 0; j < block32 / 2; ++j) {
            // ggml casts straight to uint8_t here, with no clamp to 31 (x0 + 0.5 < 32 anyway).
            const float x0 = (v[j] - s.min) * s.id;
            const float x1 = (v[block32 / 2 + j] - s.min) * s.id;
            pack_five_bit_pair(static_cast<std::uint8_t>(truncate_like_x86(x0 + 0.5f)),
                               static_cast<std::uint8_t>(truncate_like_x86(x1 + 0.5f)), j, qs, qh);
        }
        store_u32(block + 4, qh);
        std::memcpy(block + 8, qs, sizeof qs);
    });
}

// What llama-quantize writes for IQ4_NL without an importance matrix: ggml_quantize_chunk ->
// quantize_iq4_nl -> quantize_row_iq4_nl_impl with weights x^2 and ntry = 7. (ggml's
// quantize_row_iq4_nl_ref passes ntry = -1, skipping the scale search and the final
// re-encoding, and gives different bytes; the files are made by the former.)
void quantize_row_iq4_nl(const float* x, std::byte* out, std::size_t n) {
    // block_iq4_nl: f16 d, 16 bytes of 4-bit indices into the code book.
    for_each_block_encoded<block32, 18>(x, out, n, [](const float* v, std::byte* block) {
        float weight[block32];
        for (std::size_t j = 0; j < block32; ++j) weight[j] = v[j] * v[j];
        scalar::iq4nl_quantize_block(v, weight, block);
    });
}

void quantize_row_tq1_0(const float* x, std::byte* out, std::size_t n) {
    // block_tq1_0 (54 bytes): qs[48] with 5 trits a byte, qh[4] with 4 trits a byte, f16 d.
    // qs[0..31] hold elements 0..159 (byte m: elements m, m+32, m+64, m+96, m+128, the first
    // the most significant trit), qs[32..47] elements 160..239 (byte 32+m: 160+m, 176+m, ...,
    // 224+m), qh[0..3] elements 240..255 (byte m: 240+m, 244+m, 248+m, 252+m, then a zero
    // trit so the first lands in the top position).
    for_each_block_encoded<block256, 54>(x, out, n, [](const float* v, std::byte* block) {
        const float d = ternary_scale(v);
        const float id = inverse_scale(d);
        std::uint8_t bytes[52];
        // Bytes [first, first + count): byte first + m holds `trits` trits of the elements
        // offset + m + count * k.
        auto pack = [&](std::size_t first, std::size_t count, std::size_t offset,
                        std::size_t trits) {
            for (std::size_t m = 0; m < count; ++m) {
                unsigned q = 0;
                for (std::size_t k = 0; k < trits; ++k)
                    q = q * 3 + ternary_code(v[offset + m + count * k] * id);
                bytes[first + m] = pack_trits(trits == 5 ? q : q * 3);
            }
        };
        pack(0, 32, 0, 5);
        pack(32, 16, 160, 5);
        pack(48, 4, 240, 4);
        std::memcpy(block, bytes, sizeof bytes);
        store_half(block + 52, d);
    });
}

void quantize_row_tq2_0(const float* x, std::byte* out, std::size_t n) {
    // block_tq2_0 (66 bytes): qs[64] with 4 two-bit codes a byte, f16 d. Byte 32*g + m holds
    // elements 128*g + m + 32*k in bits 2k..2k+1 (k = 0..3), code = trit + 1.
    for_each_block_encoded<block256, 66>(x, out, n, [](const float* v, std::byte* block) {
        const float d = ternary_scale(v);
        const float id = inverse_scale(d);
        std::uint8_t qs[64];
        for (std::size_t g = 0; g < 2; ++g) {
            for (std::size_t m = 0; m < 32; ++m) {
                unsigned q = 0;
                for (std::size_t k = 0; k < 4; ++k)
                    q |= ternary_code(v[128 * g + m + 32 * k] * id) << (2 * k);
                qs[32 * g + m] = static_cast<std::uint8_t>(q);
            }
        }
        std::memcpy(block, qs, sizeof qs);
        store_half(block + 64, d);
    });
}

}  // namespace ck::kernels
