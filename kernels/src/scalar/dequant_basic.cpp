// Scalar reference dequantizers for the plain float types and the small-block quants.
//
// Every function follows ggml's dequantize_row_* (ggml/src/ggml-quants.c) operation for
// operation: each output is one f32 multiply (and at most one add) of values widened exactly
// from integers or f16, in ggml's order, so the results are bit-identical to ggml's to_float.
// The library is built with -ffp-contract=off, so a*b+c never becomes a fused multiply-add.
//
// Blocks are read byte by byte (little-endian, any alignment): no struct overlays.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "block_bytes.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/support/little_endian.hpp"
#include "codebooks.hpp"
#include "scalar_kernels.hpp"

namespace ck::kernels::scalar {
namespace {

// product + m, as x86's addss computes it: when both are NaN, the first operand's NaN. C++ lets
// a compiler swap the operands of + (Clang does), which changes which NaN comes out; ggml's
// code and our SIMD variants add in this order. `product` comes out of a multiply, so a NaN
// there is already quiet.
float add_offset(float product, float m) {
    return std::isnan(product) ? product : product + m;
}

// out[j] = q[j]*d + m for 32 codes. With a finite d every product is finite, so the order of
// the add cannot change a NaN (only m can be one): the plain loop is exact, and add_offset is
// needed only for a block whose d is Inf or NaN.
void affine_block(const int (&q)[32], float d, float m, float* __restrict out) {
    if (std::isfinite(d)) {
        for (int j = 0; j < 32; ++j) {
            // Two statements: a compiler that contracts a*b+c into one FMA (Clang's default
            // -ffp-contract=on) does so only within one, and ggml rounds the product first.
            const float product = static_cast<float>(q[j]) * d;
            out[j] = product + m;
        }
        return;
    }
    for (int j = 0; j < 32; ++j) out[j] = add_offset(static_cast<float>(q[j]) * d, m);
}

// ggml-common.h kvalues_mxfp4: E2M1 values doubled (the scale helpers carry the 1/2).
constexpr std::int8_t kMxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// ggml_e8m0_to_fp32_half (ggml-impl.h): 2^(e-128), built from bits. e < 2 gives the two
// subnormals 2^-128 and 2^-127; e = 255 is not special-cased (it yields 2^127, as in ggml).
float e8m0_half(u8 e) {
    const std::uint32_t bits = e < 2 ? (0x00200000u << e) : (std::uint32_t(e) - 1) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// ggml_ue4m3_to_fp32 (ggml-impl.h): unsigned E4M3 (bias 7, bit 7 ignored), halved to match the
// doubled E2M1 table. 0x00 and 0x7F (the NaN code) decode to 0. Every step is exact in f32.
float ue4m3_half(u8 x) {
    if (x == 0 || x == 0x7F) return 0.0f;
    const int exp = (x >> 3) & 0xF;
    const int man = x & 0x7;
    const float raw = exp == 0 ? std::ldexp(static_cast<float>(man), -9)
                               : std::ldexp(1.0f + static_cast<float>(man) / 8.0f, exp - 7);
    return raw * 0.5f;
}

// Q4_0 and IQ4_NL share one block (18 bytes, 32 elements): d (f16), then qs[16] whose byte j
// holds element j (low nibble) and j+16 (high nibble). They differ only in what a nibble means:
// y = value(nibble) * d, one exact multiply either way.
template <class Value>
void dequant_nibble_blocks(const std::byte* __restrict blocks, float* __restrict out, std::size_t n,
                           Value value) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 18, out += 32) {
        const float d = load_half(b);
        const u8* qs = b + 2;
        for (int j = 0; j < 16; ++j) {
            out[j] = value(qs[j] & 0x0F) * d;
            out[j + 16] = value(qs[j] >> 4) * d;
        }
    }
}

}  // namespace

void dequant_f32(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    ck::le::load_array(blocks, out, n);
}

void dequant_f16(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* p = bytes_of(blocks);
    for (std::size_t i = 0; i < n; ++i) out[i] = f16_to_f32(load_u16(p + 2 * i));
}

void dequant_bf16(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* p = bytes_of(blocks);
    for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(load_u16(p + 2 * i));
}

// Q4_0: d(f16), qs[16]; y = (nibble - 8) * d.
void dequant_q4_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_nibble_blocks(blocks, out, n, [](int q) { return static_cast<float>(q - 8); });
}

// Q4_1: d, m (f16), qs[16]; y = q*d + m (multiply rounded first, then the add).
void dequant_q4_1(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 20, out += 32) {
        const u8* qs = b + 4;
        int q[32];
        for (int j = 0; j < 16; ++j) {
            q[j] = qs[j] & 0x0F;
            q[j + 16] = qs[j] >> 4;
        }
        affine_block(q, load_half(b), load_half(b + 2), out);
    }
}

// Q5_0: d, qh (u32 LE), qs[16]; bit 4 of element j is qh bit j, of element j+16 qh bit j+16.
void dequant_q5_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 22, out += 32) {
        const float d = load_half(b);
        const std::uint32_t qh = load_u32(b + 2);
        const u8* qs = b + 6;
        for (int j = 0; j < 16; ++j) {
            const int h0 = static_cast<int>((qh >> j) & 1) << 4;
            const int h1 = static_cast<int>((qh >> (j + 16)) & 1) << 4;
            out[j] = static_cast<float>(((qs[j] & 0x0F) | h0) - 16) * d;
            out[j + 16] = static_cast<float>(((qs[j] >> 4) | h1) - 16) * d;
        }
    }
}

// Q5_1: d, m, qh, qs[16]; y = q*d + m.
void dequant_q5_1(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 24, out += 32) {
        const std::uint32_t qh = load_u32(b + 4);
        const u8* qs = b + 8;
        int q[32];
        for (int j = 0; j < 16; ++j) {
            q[j] = (qs[j] & 0x0F) | static_cast<int>((qh >> j) & 1) << 4;
            q[j + 16] = (qs[j] >> 4) | static_cast<int>((qh >> (j + 16)) & 1) << 4;
        }
        affine_block(q, load_half(b), load_half(b + 2), out);
    }
}

// Q8_0: d, qs[32] int8.
void dequant_q8_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 34, out += 32) {
        const float d = load_half(b);
        for (int j = 0; j < 32; ++j)
            out[j] = static_cast<float>(static_cast<std::int8_t>(b[2 + j])) * d;
    }
}

// IQ4_NL: d, qs[16]; y = d * table[nibble] (ggml writes d first; the product is the same).
void dequant_iq4_nl(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_nibble_blocks(blocks, out, n, [](int q) { return iq4nl_values[q]; });
}

// MXFP4: e (E8M0), qs[16]; y = doubled_E2M1[nibble] * 2^(e-128).
void dequant_mxfp4(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 17, out += 32) {
        const float d = e8m0_half(b[0]);
        const u8* qs = b + 1;
        for (int j = 0; j < 16; ++j) {
            out[j] = static_cast<float>(kMxfp4[qs[j] & 0x0F]) * d;
            out[j + 16] = static_cast<float>(kMxfp4[qs[j] >> 4]) * d;
        }
    }
}

// NVFP4 (type 40): d[4] (UE4M3, one per 16 elements), qs[32]; 64 elements per block.
// Sub-block s uses qs[8s .. 8s+7]: byte j holds element 16s+j (low nibble) and 16s+j+8 (high).
// ggml: dequantize_row_nvfp4 with ggml_ue4m3_to_fp32; confirmed against types/nvfp4.f32.
void dequant_nvfp4(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 64; ++i, b += 36) {
        for (int s = 0; s < 4; ++s, out += 16) {
            const float d = ue4m3_half(b[s]);
            const u8* qs = b + 4 + 8 * s;
            for (int j = 0; j < 8; ++j) {
                out[j] = static_cast<float>(kMxfp4[qs[j] & 0x0F]) * d;
                out[j + 8] = static_cast<float>(kMxfp4[qs[j] >> 4]) * d;
            }
        }
    }
}

// Q1_0 (type 41): d (f16), qs[16]; 128 elements, element j is bit j%8 of qs[j/8] (LSB first);
// y = bit ? d : -d (a sign flip, no multiply). ggml: dequantize_row_q1_0; confirmed against
// types/q1_0.f32.
void dequant_q1_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 128; ++i, b += 18, out += 128) {
        const float d = load_half(b);
        const float neg_d = -d;
        for (int j = 0; j < 128; ++j) out[j] = ((b[2 + j / 8] >> (j % 8)) & 1) ? d : neg_d;
    }
}

// Q2_0 (type 42): d (f16), qs[16]; 64 elements, element j is bits 2*(j%4).. of qs[j/4];
// y = (q - 1) * d, codes 0..3 meaning -1, 0, +1, +2. ggml: dequantize_row_q2_0; confirmed
// against types/q2_0.f32.
void dequant_q2_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes_of(blocks);
    for (std::size_t i = 0; i < n / 64; ++i, b += 18, out += 64) {
        const float d = load_half(b);
        for (int j = 0; j < 64; ++j) {
            const int q = (b[2 + j / 4] >> (2 * (j % 4))) & 3;
            out[j] = static_cast<float>(q - 1) * d;
        }
    }
}

}  // namespace ck::kernels::scalar
