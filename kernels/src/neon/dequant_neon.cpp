// ARM64 NEON dequantization kernels: F16, BF16, Q8_0, Q4_0, IQ4_NL, IQ4_XS, Q4_K, Q5_K and Q6_K,
// bit-identical to the scalar reference (src/scalar/dequant_basic.cpp, dequant_kquants.cpp,
// dequant_iq.cpp: the specification). Each output is the scalar code's f32 operations in its
// order, lane-wise: an exact integer-to-float conversion, then one multiply (and for Q4_K/Q5_K
// one subtract), never fused (-ffp-contract=off, no vfma). F16 widens with the FCVTL
// instruction, which, like the scalar conversion, keeps a NaN's payload and sets its quiet bit.
//
// NEON is part of every ARM64 CPU, so this unit has no flags of its own and no CPU check; the
// types it leaves out take the scalar kernels (dispatch.cpp merges the tables).
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "../scalar/block_bytes.hpp"
#include "../simd_tables.hpp"

namespace ck::kernels {
namespace {

using u8 = std::uint8_t;

const u8* bytes(const std::byte* p) {
    return reinterpret_cast<const u8*>(p);
}

// A block's f16 field (little-endian, any alignment) as f32: FCVT, exact.
float half_at(const u8* p) {
    const auto bits = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(bits))), 0);
}

// out[0..16) = float(q[i]) * d for 16 int8 values.
inline void emit16(float* out, int8x16_t q, float32x4_t d) {
    const int16x8_t lo = vmovl_s8(vget_low_s8(q)), hi = vmovl_s8(vget_high_s8(q));
    vst1q_f32(out, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), d));
    vst1q_f32(out + 4, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo))), d));
    vst1q_f32(out + 8, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), d));
    vst1q_f32(out + 12, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi))), d));
}

// out[0..16) = d * float(q[i]) - m for 16 values 0..31 (the product rounded, then the subtract).
inline void emit16_sub(float* out, uint8x16_t q, float32x4_t d, float32x4_t m) {
    const uint16x8_t lo = vmovl_u8(vget_low_u8(q)), hi = vmovl_u8(vget_high_u8(q));
    const float32x4_t f[4] = {
        vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))), vcvtq_f32_u32(vmovl_u16(vget_high_u16(lo))),
        vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))), vcvtq_f32_u32(vmovl_u16(vget_high_u16(hi)))};
    for (int k = 0; k < 4; ++k) vst1q_f32(out + 4 * k, vsubq_f32(vmulq_f32(d, f[k]), m));
}

void dequant_f16(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* p = bytes(blocks);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t h = vreinterpretq_f16_u8(vld1q_u8(p + 2 * i));
        vst1q_f32(out + i, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(out + i + 4, vcvt_high_f32_f16(h));
    }
    for (; i < n; ++i) out[i] = half_at(p + 2 * i);
}

void dequant_bf16(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* p = bytes(blocks);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t h = vreinterpretq_u16_u8(vld1q_u8(p + 2 * i));
        vst1q_f32(out + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)));
        vst1q_f32(out + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(h, 16)));
    }
    for (; i < n; ++i) {
        const std::uint32_t bits = std::uint32_t(p[2 * i] | (p[2 * i + 1] << 8)) << 16;
        vst1q_lane_f32(out + i, vreinterpretq_f32_u32(vdupq_n_u32(bits)), 0);
    }
}

void dequant_q8_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 34, out += 32) {
        const float32x4_t d = vdupq_n_f32(half_at(b));
        emit16(out, vreinterpretq_s8_u8(vld1q_u8(b + 2)), d);
        emit16(out + 16, vreinterpretq_s8_u8(vld1q_u8(b + 18)), d);
    }
}

// Q4_0 and IQ4_NL: d, then qs[16] whose byte j holds element j (low nibble) and j + 16 (high);
// `values` maps a nibble to its int8 value (q - 8, or the IQ4_NL code book).
void dequant_nibbles(const std::byte* blocks, float* out, std::size_t n, int8x16_t values) {
    const u8* b = bytes(blocks);
    for (std::size_t i = 0; i < n / 32; ++i, b += 18, out += 32) {
        const float32x4_t d = vdupq_n_f32(half_at(b));
        const uint8x16_t qs = vld1q_u8(b + 2);
        emit16(out, vqtbl1q_s8(values, vandq_u8(qs, vdupq_n_u8(0x0F))), d);
        emit16(out + 16, vqtbl1q_s8(values, vshrq_n_u8(qs, 4)), d);
    }
}

constexpr std::int8_t q4_0_values[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};
// ggml's kvalues_iq4nl (src/scalar/codebooks.hpp holds them as floats).
constexpr std::int8_t iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

void dequant_q4_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_nibbles(blocks, out, n, vld1q_s8(q4_0_values));
}

void dequant_iq4_nl(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_nibbles(blocks, out, n, vld1q_s8(iq4nl_values));
}

void dequant_iq4_xs(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const int8x16_t values = vld1q_s8(iq4nl_values);
    const u8* b = bytes(blocks);
    for (std::size_t i = 0; i < n / 256; ++i, b += 136) {
        const float d = half_at(b);
        const unsigned scales_h = b[2] | (b[3] << 8);
        const u8* qs = b + 8;
        for (int ib = 0; ib < 8; ++ib, qs += 16, out += 32) {
            const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) |
                           static_cast<int>(((scales_h >> (2 * ib)) & 3) << 4);
            const float32x4_t dl = vdupq_n_f32(d * static_cast<float>(ls - 32));
            const uint8x16_t q = vld1q_u8(qs);
            emit16(out, vqtbl1q_s8(values, vandq_u8(q, vdupq_n_u8(0x0F))), dl);
            emit16(out + 16, vqtbl1q_s8(values, vshrq_n_u8(q, 4)), dl);
        }
    }
}

// Q4_K (144 bytes) and Q5_K (176 bytes, qh[32] before qs): per 64 elements, 32 bytes of qs give
// sub-block 2g (low nibbles) and 2g+1 (high), plus a fifth bit each from qh for Q5_K.
template <bool FifthBit>
void dequant_q45_k(const std::byte* blocks, float* out, std::size_t n) {
    constexpr std::size_t block_bytes = FifthBit ? 176 : 144;
    const u8* b = bytes(blocks);
    for (std::size_t i = 0; i < n / 256; ++i, b += block_bytes) {
        const float d = half_at(b), dmin = half_at(b + 2);
        const u8* ql = b + (FifthBit ? 48 : 16);
        uint8x16_t qh[2] = {vld1q_u8(b + 16), vld1q_u8(b + 32)};
        for (int is = 0; is < 8; is += 2, ql += 32, out += 64) {
            for (int half = 0; half < 2; ++half) {
                int sc, m;
                scalar::scale_min_k4(is + half, b + 4, sc, m);
                const float32x4_t vd = vdupq_n_f32(d * static_cast<float>(sc));
                const float32x4_t vm = vdupq_n_f32(dmin * static_cast<float>(m));
                for (int part = 0; part < 2; ++part) {
                    const uint8x16_t q = vld1q_u8(ql + 16 * part);
                    uint8x16_t v = half == 0 ? vandq_u8(q, vdupq_n_u8(0x0F)) : vshrq_n_u8(q, 4);
                    if constexpr (FifthBit) {
                        const uint8x16_t bit = vdupq_n_u8(static_cast<u8>(1 << (is + half)));
                        v = vorrq_u8(v, vandq_u8(vtstq_u8(qh[part], bit), vdupq_n_u8(16)));
                    }
                    emit16_sub(out + 32 * half + 16 * part, v, vd, vm);
                }
            }
        }
    }
}

void dequant_q4_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_q45_k<false>(blocks, out, n);
}

void dequant_q5_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_q45_k<true>(blocks, out, n);
}

// Q6_K (210 bytes): ql[128], qh[64], scales[16] int8, d. Per 128 elements, y[l + 32 k] takes 4
// bits of ql and 2 of qh, minus 32, times (d * sc): ggml's order, the product d * sc first.
void dequant_q6_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    const u8* b = bytes(blocks);
    for (std::size_t i = 0; i < n / 256; ++i, b += 210) {
        const float d = half_at(b + 208);
        const u8* ql = b;
        const u8* qh = b + 128;
        const u8* sb = b + 192;
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sb += 8, out += 128) {
            for (int g = 0; g < 2; ++g) {
                const uint8x16_t l0 = vld1q_u8(ql + 16 * g), l1 = vld1q_u8(ql + 32 + 16 * g);
                const uint8x16_t h = vld1q_u8(qh + 16 * g);
                const uint8x16_t low4 = vdupq_n_u8(0x0F), two = vdupq_n_u8(3);
                const uint8x16_t q[4] = {
                    vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(h, two), 4)),
                    vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 2), two), 4)),
                    vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 4), two), 4)),
                    vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(h, 6), 4))};
                for (int k = 0; k < 4; ++k) {
                    const float ds =
                        d * static_cast<float>(static_cast<std::int8_t>(sb[g + 2 * k]));
                    const int8x16_t v = vsubq_s8(vreinterpretq_s8_u8(q[k]), vdupq_n_s8(32));
                    emit16(out + 32 * k + 16 * g, v, vdupq_n_f32(ds));
                }
            }
        }
    }
}

}  // namespace

template <>
DequantTable own_kernels<Isa::neon>() {
    DequantTable t;
    t.isa = Isa::neon;
    auto set = [&t](GgmlType type, DequantFn fn) { t.fn[static_cast<std::size_t>(type)] = fn; };
    set(GgmlType::f16, dequant_f16);
    set(GgmlType::bf16, dequant_bf16);
    set(GgmlType::q8_0, dequant_q8_0);
    set(GgmlType::q4_0, dequant_q4_0);
    set(GgmlType::iq4_nl, dequant_iq4_nl);
    set(GgmlType::iq4_xs, dequant_iq4_xs);
    set(GgmlType::q4_k, dequant_q4_k);
    set(GgmlType::q5_k, dequant_q5_k);
    set(GgmlType::q6_k, dequant_q6_k);
    return t;
}

}  // namespace ck::kernels
