// Scalar reference dequantizers for the grid-based i-quants: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S, IQ1_S, IQ1_M (256-element super-blocks).
//
// Each function follows ggml's dequantize_row_iq* (ggml/src/ggml-quants.c): the same f32
// operations on the same operands in the same order, so the output is bit-identical to ggml's
// to_float. In particular:
//  - block scales are built exactly as ggml writes them, e.g. d * (0.5f + s) * 0.25f is
//    (d * (0.5f + s)) * 0.25f, never d * ((0.5f + s) * 0.25f);
//  - a sign is applied by multiplying with -1.f / 1.f, as ggml does, not by negation;
//  - the library is built with -ffp-contract=off, so nothing becomes a fused multiply-add.
//
// Blocks are read byte by byte (little-endian, any alignment): no struct overlays. Grid bytes are
// taken by shifting the table entry, which is what ggml's byte view of its little-endian entries
// yields.
#include <cstdint>

#include "block_bytes.hpp"
#include "ck/kernels/float_convert.hpp"
#include "iq_grids.hpp"
#include "scalar_kernels.hpp"

namespace ck::kernels::scalar {
namespace {

constexpr std::size_t kQK = 256;  // elements per super-block (ggml's QK_K)

// Block sizes in bytes (ggml-common.h block_iq*).
constexpr std::size_t kIq2xxsBytes = 2 + 64;             // d, qs[32] u16
constexpr std::size_t kIq2xsBytes = 2 + 64 + 8;          // d, qs[32] u16, scales[8]
constexpr std::size_t kIq2sBytes = 2 + 64 + 8 + 8;       // d, qs[32] + signs[32], qh[8], scales[8]
constexpr std::size_t kIq3xxsBytes = 2 + 64 + 32;        // d, qs[64], scales_and_signs[8] u32
constexpr std::size_t kIq3sBytes = 2 + 64 + 8 + 32 + 4;  // d, qs[64], qh[8], signs[32], scales[4]
constexpr std::size_t kIq1sBytes = 2 + 32 + 16;          // d, qs[32], qh[8] u16
constexpr std::size_t kIq1mBytes = 32 + 16 + 8;          // qs[32], qh[16], scales[8] (holds d)

// Byte j of a grid entry, as an unsigned magnitude (IQ2 / IQ3 grids).
u8 grid_byte(std::uint64_t entry, int j) {
    return static_cast<u8>(entry >> (8 * j));
}

// Byte j of an IQ1S grid entry, as the signed value -1, 0 or +1.
std::int8_t grid_trit(std::uint64_t entry, int j) {
    return static_cast<std::int8_t>(static_cast<u8>(entry >> (8 * j)));
}

// ggml's (signs & kmask_iq2xs[j] ? -1.f : 1.f).
float sign_of(u8 signs, int j) {
    return (signs & kmask_iq2xs[j]) ? -1.f : 1.f;
}

// 8 outputs from one IQ2 grid entry: y[j] = db * grid[j] * sign[j] (ggml's order).
void emit_iq2_group(float db, std::uint64_t entry, u8 signs, float* y) {
    for (int j = 0; j < 8; ++j) {
        y[j] = db * static_cast<float>(grid_byte(entry, j)) * sign_of(signs, j);
    }
}

// 8 outputs from two IQ3 grid entries (4 elements each) sharing one sign byte.
void emit_iq3_group(float db, std::uint32_t entry1, std::uint32_t entry2, u8 signs, float* y) {
    for (int j = 0; j < 4; ++j) {
        y[j + 0] = db * static_cast<float>(grid_byte(entry1, j)) * sign_of(signs, j + 0);
        y[j + 4] = db * static_cast<float>(grid_byte(entry2, j)) * sign_of(signs, j + 4);
    }
}

// 8 outputs from one IQ1S grid entry: y[j] = dl * (grid[j] + delta).
void emit_iq1_group(float dl, float delta, std::uint64_t entry, float* y) {
    for (int j = 0; j < 8; ++j) {
        y[j] = dl * (static_cast<float>(grid_trit(entry, j)) + delta);
    }
}

// The IQ2 scale of a 4-bit field s: d * (0.5f + s) * 0.25f, in ggml's order.
float iq2_scale(float d, unsigned s) {
    return d * (0.5f + static_cast<float>(s)) * 0.25f;
}

// IQ2_XS and IQ2_S: per 32 elements a scale byte, the low nibble for the first 16, the high
// one for the last 16.
struct NibbleScales {
    float first16, last16;
};
NibbleScales iq2_nibble_scales(float d, u8 scale) {
    return {iq2_scale(d, scale & 0xf), iq2_scale(d, scale >> 4)};
}

// The IQ1_S / IQ1_M grid offset, negative when its sign bit is set.
float iq1_delta(bool negative) {
    return negative ? -IQ1S_DELTA : IQ1S_DELTA;
}

}  // namespace

// IQ2_XXS: per 32 elements, 8 bytes: 4 grid indices (u8), then a u32 whose bits 0..27 hold four
// 7-bit sign indices and bits 28..31 the 4-bit scale.
void dequant_iq2_xxs(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<kQK, kIq2xxsBytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        for (int ib32 = 0; ib32 < 8; ++ib32) {
            const u8* qs = b + 2 + 8 * ib32;
            const std::uint32_t aux = load_u32(qs + 4);
            const float db = iq2_scale(d, aux >> 28);
            for (int l = 0; l < 4; ++l, y += 8)
                emit_iq2_group(db, iq2xxs_grid[qs[l]], ksigns_iq2xs[(aux >> (7 * l)) & 127], y);
        }
    });
}

// IQ2_XS: per 8 elements a u16 (9-bit grid index, 7-bit sign index); per 32 elements a scale
// byte (iq2_nibble_scales).
void dequant_iq2_xs(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<kQK, kIq2xsBytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        const u8* scales = b + 2 + 64;
        for (int ib32 = 0; ib32 < 8; ++ib32) {
            const NibbleScales db = iq2_nibble_scales(d, scales[ib32]);
            for (int l = 0; l < 4; ++l, y += 8) {
                const std::uint16_t q = load_u16(b + 2 + 2 * (4 * ib32 + l));
                emit_iq2_group(l < 2 ? db.first16 : db.last16, iq2xs_grid[q & 511],
                               ksigns_iq2xs[q >> 9], y);
            }
        }
    });
}

// IQ2_S: 10-bit grid index = qs byte | 2 bits of qh; explicit 8-bit signs (no parity trick).
void dequant_iq2_s(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<kQK, kIq2sBytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        const u8* qs = b + 2;
        const u8* signs = qs + kQK / 8;
        const u8* qh = b + 2 + 64;
        const u8* scales = qh + 8;
        for (int ib32 = 0; ib32 < 8; ++ib32, qs += 4, signs += 4) {
            const NibbleScales db = iq2_nibble_scales(d, scales[ib32]);
            for (int l = 0; l < 4; ++l, y += 8) {
                const unsigned idx = qs[l] | ((unsigned(qh[ib32]) << (8 - 2 * l)) & 0x300);
                emit_iq2_group(l < 2 ? db.first16 : db.last16, iq2s_grid[idx], signs[l], y);
            }
        }
    });
}

// IQ3_XXS: 64 grid indices (4 elements each), then per 32 elements a u32 of four 7-bit sign
// indices and a 4-bit scale: db = d * (0.5f + scale) * 0.5f.
void dequant_iq3_xxs(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<kQK, kIq3xxsBytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        const u8* qs = b + 2;
        const u8* scales_and_signs = qs + kQK / 4;
        for (int ib32 = 0; ib32 < 8; ++ib32, qs += 8) {
            const std::uint32_t aux = load_u32(scales_and_signs + 4 * ib32);
            const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, y += 8)
                emit_iq3_group(db, iq3xxs_grid[qs[2 * l]], iq3xxs_grid[qs[2 * l + 1]],
                               ksigns_iq2xs[(aux >> (7 * l)) & 127], y);
        }
    });
}

// IQ3_S: 9-bit grid index = qs byte | 1 bit of qh; explicit sign bytes; one scale nibble per 32
// elements, db = d * (1 + 2*nibble) (integer math, then one f32 multiply).
void dequant_iq3_s(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<kQK, kIq3sBytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        const u8* qs = b + 2;
        const u8* qh = qs + 64;
        const u8* signs = qh + 8;
        const u8* scales = signs + 32;
        // ggml walks two 32-element halves per scale byte; qh[0] / qh[1] serve one half each.
        for (int ib32 = 0; ib32 < 8; ib32 += 2, qh += 2) {
            const float dbs[2] = {d * static_cast<float>(1 + 2 * (scales[ib32 / 2] & 0xf)),
                                  d * static_cast<float>(1 + 2 * (scales[ib32 / 2] >> 4))};
            for (int half = 0; half < 2; ++half, qs += 8, signs += 4) {
                const unsigned h = qh[half];
                for (int l = 0; l < 4; ++l, y += 8) {
                    const unsigned idx1 = qs[2 * l + 0] | ((h << (8 - 2 * l)) & 256);
                    const unsigned idx2 = qs[2 * l + 1] | ((h << (7 - 2 * l)) & 256);
                    emit_iq3_group(dbs[half], iq3s_grid[idx1], iq3s_grid[idx2], signs[l], y);
                }
            }
        }
    });
}

// IQ1_S: per 32 elements a u16 qh: bits 0..11 the high 3 bits of four 11-bit grid indices,
// bits 12..14 the scale, bit 15 the sign of the delta.
void dequant_iq1_s(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<kQK, kIq1sBytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const float d = load_half(b);
        for (int ib = 0; ib < 8; ++ib) {
            const u8* qs = b + 2 + 4 * ib;
            const unsigned qh = load_u16(b + 2 + 32 + 2 * ib);
            const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
            const float delta = iq1_delta(qh & 0x8000);
            for (int l = 0; l < 4; ++l, y += 8)
                emit_iq1_group(dl, delta, iq1s_grid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], y);
        }
    });
}

// IQ1_M: no block-level d field; the f16 super-block scale is spread over the top nibbles of the
// four u16 scale words. Each scale word also carries four 3-bit sub-scales (one per 16 elements);
// each qh byte carries two 3-bit index extensions and two delta signs.
void dequant_iq1_m(const std::byte* __restrict blocks, float* __restrict out, std::size_t n) {
    for_each_block<kQK, kIq1mBytes>(blocks, out, n, [](const u8* b, float* __restrict y) {
        const u8* qs = b;
        const u8* qh = b + 32;
        std::uint16_t sc[4];
        for (int k = 0; k < 4; ++k) sc[k] = load_u16(b + 48 + 2 * k);
        const auto d_bits = static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                       ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = f16_to_f32(d_bits);
        for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2) {
            const int shift = 6 * (ib % 2);
            const float dl1 = d * static_cast<float>(2 * ((sc[ib / 2] >> (shift + 0)) & 0x7) + 1);
            const float dl2 = d * static_cast<float>(2 * ((sc[ib / 2] >> (shift + 3)) & 0x7) + 1);
            const unsigned idx[4] = {
                qs[0] | ((unsigned(qh[0]) << 8) & 0x700), qs[1] | ((unsigned(qh[0]) << 4) & 0x700),
                qs[2] | ((unsigned(qh[1]) << 8) & 0x700), qs[3] | ((unsigned(qh[1]) << 4) & 0x700)};
            // ggml's dequantize_row_iq1_m uses IQ1S_DELTA too.
            const float delta[4] = {iq1_delta(qh[0] & 0x08), iq1_delta(qh[0] & 0x80),
                                    iq1_delta(qh[1] & 0x08), iq1_delta(qh[1] & 0x80)};
            for (int l = 0; l < 4; ++l, y += 8)
                emit_iq1_group(l < 2 ? dl1 : dl2, delta[l], iq1s_grid[idx[l]], y);
        }
    });
}

}  // namespace ck::kernels::scalar
