// Scalar reference dequantizers for the 256-element super-block types: the k-quants, IQ4_XS and
// the ternary TQ1_0 / TQ2_0.
//
// Each follows ggml's dequantize_row_* (ggml/src/ggml-quants.c) in its f32 operations and their
// order: a scale is formed first (e.g. d1 = d*sc, m1 = dmin*m) and each output is then
// d1*q - m1, so the roundings match ggml bit for bit. Built with -ffp-contract=off.
//
// Blocks are read byte by byte (little-endian, any alignment): no struct overlays.
#include <cstdint>

#include "block_bytes.hpp"
#include "ck/kernels/float_convert.hpp"
#include "codebooks.hpp"
#include "scalar_kernels.hpp"

namespace ck::kernels::scalar {
namespace {

float to_f(int v) {
    return static_cast<float>(v);
}

// A Q4_K / Q5_K sub-block's scale and min as ggml forms them (d * sc, dmin * m); each output is
// then scale * q - min.
struct ScaleMin {
    float scale, min;
};
ScaleMin sub_block_scale_min(int j, const u8* scales, float d, float dmin) {
    int sc, m;
    scale_min_k4(j, scales, sc, m);
    return {d * to_f(sc), dmin * to_f(m)};
}

// Q4_K (144 bytes): d, dmin, scales[12], qs[128]. Each 32-byte group of qs holds sub-block 2g
// in its low nibbles and 2g+1 in its high nibbles. Q5_K (176 bytes) has qh[32] before qs: a
// 5th bit per element, the pair of qh bits used moving up by 2 per 64 elements.
template <bool FifthBit>
void dequant_q45_k(const std::byte* blocks, float* out, std::size_t n) {
    constexpr std::size_t block_bytes = FifthBit ? 176 : 144;
    for_each_block<256, block_bytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        const float dmin = load_half(b + 2);
        const u8* qh = b + 16;
        const u8* ql = b + (FifthBit ? 48 : 16);
        auto fifth_bit = [qh](int l, int mask) { return (FifthBit && (qh[l] & mask)) ? 16 : 0; };
        for (int is = 0; is < 8; is += 2, ql += 32) {
            const ScaleMin low = sub_block_scale_min(is, b + 4, d, dmin);
            const ScaleMin high = sub_block_scale_min(is + 1, b + 4, d, dmin);
            for (int l = 0; l < 32; ++l)
                *y++ = low.scale * to_f((ql[l] & 0xF) + fifth_bit(l, 1 << is)) - low.min;
            for (int l = 0; l < 32; ++l)
                *y++ = high.scale * to_f((ql[l] >> 4) + fifth_bit(l, 2 << is)) - high.min;
        }
    });
}

}  // namespace

// Q2_K (84 bytes): scales[16], qs[64], d, dmin. Per 128 elements, 32 bytes of qs are read four
// times at shifts 0,2,4,6; each pass covers two 16-element groups with their own scale byte.
void dequant_q2_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<256, 84>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b + 80);
        const float dmin = load_half(b + 82);
        const u8* sc = b;
        for (const u8* q = b + 16; q < b + 80; q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int g = 0; g < 2; ++g, ++sc) {
                    const float dl = d * to_f(*sc & 0xF);
                    const float ml = dmin * to_f(*sc >> 4);
                    for (int l = 0; l < 16; ++l)
                        *y++ = dl * to_f((q[16 * g + l] >> shift) & 3) - ml;
                }
            }
        }
    });
}

// Q3_K (110 bytes): hmask[32], qs[64], scales[12], d. Same walk as Q2_K; a clear hmask bit
// subtracts 4. The 16 6-bit scales: low nibbles from bytes 0-7 (scale j and j+8 share byte
// j%8), high 2 bits from bytes 8-11 (scale j at byte 8 + j%4, bits 2*(j/4)).
void dequant_q3_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<256, 110>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const u8* hm = b;
        const u8* s = b + 96;
        const float d_all = load_half(b + 108);
        int scales[16];
        for (int j = 0; j < 16; ++j) {
            const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
            const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
            scales[j] = low | (high << 4);
        }
        const int* scale = scales;
        u8 m = 1;
        for (const u8* q = b + 32; q < b + 96; q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = static_cast<u8>(m << 1)) {
                for (int g = 0; g < 2; ++g) {
                    const float dl = d_all * to_f(*scale++ - 32);
                    for (int l = 0; l < 16; ++l) {
                        const int v =
                            ((q[16 * g + l] >> shift) & 3) - ((hm[16 * g + l] & m) ? 0 : 4);
                        *y++ = dl * to_f(v);
                    }
                }
            }
        }
    });
}

void dequant_q4_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_q45_k<false>(blocks, out, n);
}

void dequant_q5_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    dequant_q45_k<true>(blocks, out, n);
}

// Q6_K (210 bytes): ql[128], qh[64], scales[16] int8, d. Per 128 elements: y[l], y[l+32],
// y[l+64], y[l+96] from ql[l] low, ql[l+32] low, ql[l] high, ql[l+32] high, plus 2 bits of
// qh[l] each. ggml computes (d * sc) * q, left to right.
void dequant_q6_k(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<256, 210>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const u8* ql = b;
        const u8* qh = b + 128;
        const u8* sb = b + 192;
        const float d = load_half(b + 208);
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sb += 8, y += 128) {
            // ggml computes (d * sc) * q: the products d * sc are the same for 16 outputs.
            float ds[8];
            for (int k = 0; k < 8; ++k) ds[k] = d * to_f(static_cast<std::int8_t>(sb[k]));
            // Two groups of 16 with a fixed scale each: a loop shape the compiler vectorises.
            for (int g = 0; g < 2; ++g) {
                const float s1 = ds[g], s2 = ds[g + 2], s3 = ds[g + 4], s4 = ds[g + 6];
                for (int j = 0; j < 16; ++j) {
                    const int l = 16 * g + j;
                    const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                    const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                    const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                    const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                    y[l] = s1 * to_f(q1);
                    y[l + 32] = s2 * to_f(q2);
                    y[l + 64] = s3 * to_f(q3);
                    y[l + 96] = s4 * to_f(q4);
                }
            }
        }
    });
}

// IQ4_XS (136 bytes): d, scales_h (u16 LE), scales_l[4], qs[128]. Sub-block ib's 6-bit scale:
// low 4 bits from nibble ib%2 of scales_l[ib/2], high 2 bits from scales_h bits 2*ib.
void dequant_iq4_xs(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<256, 136>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        const unsigned scales_h = load_u16(b + 2);
        const u8* scales_l = b + 4;
        const u8* qs = b + 8;
        for (int ib = 0; ib < 8; ++ib, qs += 16, y += 32) {
            const int ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) |
                           static_cast<int>(((scales_h >> (2 * ib)) & 3) << 4);
            const float dl = d * to_f(ls - 32);
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * iq4nl_values[qs[j] & 0xF];
                y[j + 16] = dl * iq4nl_values[qs[j] >> 4];
            }
        }
    });
}

// TQ1_0 (54 bytes): qs[48], qh[4], d. Five base-3 digits per byte, stored as a fixed-point
// fraction: digit n of byte v is the integer part of 3 * frac(v * 3^n / 256), i.e.
// ((uint8)(v * 3^n) * 3) >> 8. Order: qs[0..31] x n=0..4, qs[32..47] x n=0..4, qh x n=0..3.
void dequant_tq1_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    static constexpr u8 kPow3[5] = {1, 3, 9, 27, 81};
    auto trit = [](u8 v, int k) {
        const unsigned q = static_cast<u8>(v * kPow3[k]);  // wraps mod 256, as ggml's uint8_t
        return static_cast<int>((q * 3) >> 8);
    };
    for_each_block<256, 54>(blocks, out, n, [trit](const u8* b, float* __restrict y) {
        const float d = load_half(b + 52);
        // Bytes [first, first + count) of the block, each giving `digits` trits.
        auto run = [&](int first, int count, int digits) {
            for (int k = 0; k < digits; ++k)
                for (int m = 0; m < count; ++m) *y++ = to_f(trit(b[first + m], k) - 1) * d;
        };
        run(0, 32, 5);
        run(32, 16, 5);
        run(48, 4, 4);
    });
}

// TQ2_0 (66 bytes): qs[64], d. Per 32-byte group, four passes at shifts 0,2,4,6; y = (q-1)*d.
void dequant_tq2_0(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<256, 66>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b + 64);
        for (int j = 0; j < 64; j += 32)
            for (int shift = 0; shift < 8; shift += 2)
                for (int m = 0; m < 32; ++m) *y++ = to_f(((b[j + m] >> shift) & 3) - 1) * d;
    });
}

}  // namespace ck::kernels::scalar
