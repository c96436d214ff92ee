// The slice logic of the AVX2 and AVX-512 repack encoders, written once over the unit's float
// register (simd_lanes.hpp): the two passes per slice, the statistics, the fused Q8_0 -> Int8
// and Q4_0 -> NF4 paths and the variant's table. A slice (1024 elements) is encoded in two
// passes: first every block's scale (min/max or absmax, rounded to f16 a whole slice at a time),
// then the codes. One pass per block would chain each block's reduction, both conversions and
// its division back to back, which the out-of-order window cannot hide. Q8_0 -> Int8 and
// Q4_0 -> NF4 decode their source inside the first pass instead of in a separate
// dequantization pass.
//
// Included by repack_avx2.cpp and repack_avx512.cpp, which define pass 2 of each target
// (int8_codes, nf4_codes, declared below): there the variants differ most. Every f32 operation
// is the scalar reference's (repack_scalar.cpp), in its order, never fused. Internal linkage
// throughout, as simd_width.hpp explains.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../simd_lanes.hpp"
#include "../simd_width.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/repack.hpp"
#include "repack_driver.hpp"

namespace ck::kernels {
namespace {

constexpr std::size_t int8_blocks_per_slice = slice_elements / int8_block_elements;  // 8
constexpr std::size_t nf4_blocks_per_slice = slice_elements / nf4_block_elements;    // 16
constexpr int int8_registers = static_cast<int>(int8_block_elements) / float_lanes;
constexpr int nf4_registers = static_cast<int>(nf4_block_elements) / float_lanes;

// The 16 statistics lanes of a slice (16 / float_lanes registers) summed in reduce_lanes' order:
// lane i + lane i+8 (the two registers, or the two halves of one), then i + i+4, i + i+2,
// i + i+1.
inline float reduce_sum(const Floats* lanes16) {
    Floats total = lanes16[0];
    for (int r = 1; r < 16 / float_lanes; ++r) total = total + lanes16[r];
    return fold_8(
        fold_to_8(total, [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); }),
        [](__m128 a, __m128 b) { return _mm_add_ps(a, b); },
        [](__m128 a, __m128 b) { return _mm_add_ss(a, b); });
}

// The statistics of one slice in the reference's 16 lanes: register r of a block holds elements
// float_lanes * r onwards, so with 8 lanes even registers are lanes 0-7 and odd ones lanes 8-15.
struct LaneSums {
    static constexpr int registers = 16 / float_lanes;
    Floats error[registers] = {};
    Floats source[registers] = {};
    Floats max_abs = {};

    void add(int r, Floats decoded, Floats x) {
        const int i = r & (registers - 1);  // r % registers (1 or 2), for a non-negative r
        const Floats e = decoded - x;
        error[i] = error[i] + e * e;
        source[i] = source[i] + x * x;
        max_abs = max_floats(abs_floats(e), max_abs);  // a NaN error never wins
    }
    void flush(RepackError& into, std::size_t elements) const {
        add_slice_sums(into, reduce_sum(error), reduce_sum(source), reduce_max(max_abs), elements);
    }
};

// round_half_away(y) for y in [0, 255] is trunc(y + 0.49999997): y + 0.5 would round
// 0.49999997 itself up to 1.0, and 0.49999997 (0x3effffff) is the largest addend that still
// carries every exact half up. Checked exhaustively over all 2^30 floats in [0, 255].
inline Ints round_code(Floats y) {
    return CK_SIMD(cvttps_epi32)(y + reinterpret_cast<Floats>(CK_SIMD(set1_epi32)(0x3effffff)));
}

// The reference's clamp((x - mn) / range, 0, 1) * 255 before rounding: the max first, so a NaN
// quotient becomes 0.
inline Floats int8_scaled(Floats x, Floats mn, Floats range) {
    const Floats t = min_floats(max_floats((x - mn) / range, Floats{}), splat(1.0f));
    return t * splat(255.0f);
}

// Pass 2 of an Int8 block whose max is not above its min: every code is 0, decoded as
// (0 / 255) * range + mn like any other.
inline void int8_flat_block(const float* v, std::uint8_t* q, float mn, float range,
                            LaneSums& sums) {
    const Floats decoded = Floats{} / splat(255.0f) * splat(range) + splat(mn);
    for (int r = 0; r < int8_registers; ++r) sums.add(r, decoded, load_floats(v + float_lanes * r));
    std::memset(q, 0, int8_block_elements);
}

// Pass 2 of an NF4 block whose scale is 0: every index is 7 (the entry 0.0).
inline void nf4_zero_block(const float* v, std::uint8_t* packed, float scale, LaneSums& sums) {
    const Floats decoded = splat(nf4_codebook[7]) * splat(scale);
    for (int r = 0; r < nf4_registers; ++r) sums.add(r, decoded, load_floats(v + float_lanes * r));
    std::memset(packed, 0x77, nf4_block_elements / 2);
}

// Pass 2 of the other blocks, defined by the unit after this file.
void int8_codes(const float* v, std::uint8_t* q, float mn, float range, LaneSums& sums);
void nf4_codes(const float* v, std::uint8_t* packed, float scale, LaneSums& sums);

// ---- Int8 ----------------------------------------------------------------------------------

struct Int8Scales {
    alignas(32) float mn[int8_blocks_per_slice];
    alignas(32) float range[int8_blocks_per_slice];
    int spread;  // bit b: max > min in block b
};

// Pass 1: `values(b, r)` gives register r of block b. The eight blocks' f16 rounding is one
// 8-lane conversion in both variants.
template <class Values>
Int8Scales int8_scales(Values values, std::size_t blocks, std::uint16_t* min_max) {
    alignas(32) float low[int8_blocks_per_slice] = {}, high[int8_blocks_per_slice] = {};
    for (std::size_t b = 0; b < blocks; ++b) {
        Floats lo = splat(__builtin_inff()), hi = splat(-__builtin_inff());
        for (int r = 0; r < int8_registers; ++r) {
            const Floats x = values(b, r);
            lo = min_floats(x, lo);  // the data first: a NaN element is skipped
            hi = max_floats(x, hi);
        }
        low[b] = reduce_min(lo) + 0.0f;  // -0 becomes +0, as in the reference
        high[b] = reduce_max(hi) + 0.0f;
    }
    const __m128i low16 = _mm256_cvtps_ph(_mm256_load_ps(low), _MM_FROUND_TO_NEAREST_INT);
    const __m128i high16 = _mm256_cvtps_ph(_mm256_load_ps(high), _MM_FROUND_TO_NEAREST_INT);
    alignas(32) std::uint16_t pairs[2 * int8_blocks_per_slice];
    _mm_store_si128(reinterpret_cast<__m128i*>(pairs), _mm_unpacklo_epi16(low16, high16));
    _mm_store_si128(reinterpret_cast<__m128i*>(pairs + 8), _mm_unpackhi_epi16(low16, high16));
    for (std::size_t i = 0; i < 2 * blocks; ++i) min_max[i] = pairs[i];
    Int8Scales s;
    const __m256 mn = _mm256_cvtph_ps(low16), mx = _mm256_cvtph_ps(high16);
    _mm256_store_ps(s.mn, mn);
    _mm256_store_ps(s.range, _mm256_sub_ps(mx, mn));
    s.spread = _mm256_movemask_ps(_mm256_cmp_ps(mx, mn, _CMP_GT_OQ));
    return s;
}

// `v` holds the slice's values (pass 1 may have just written them there).
template <class Values>
void int8_slice(Values values, const float* v, std::size_t blocks, std::uint8_t* q,
                std::uint16_t* min_max, RepackError& error) {
    const Int8Scales s = int8_scales(values, blocks, min_max);
    LaneSums sums;
    for (std::size_t b = 0; b < blocks; ++b) {
        const float* values_b = v + b * int8_block_elements;
        std::uint8_t* q_b = q + b * int8_block_elements;
        if ((s.spread >> b) & 1)
            int8_codes(values_b, q_b, s.mn[b], s.range[b], sums);
        else  // max <= min
            int8_flat_block(values_b, q_b, s.mn[b], s.range[b], sums);
    }
    sums.flush(error, blocks * int8_block_elements);
}

// ---- NF4 -----------------------------------------------------------------------------------

// Pass 1: the f16 absmax of each block, stored, and widened into `scale`.
template <class Values>
void nf4_scales(Values values, std::size_t blocks, std::uint16_t* absmax, float* scale) {
    alignas(64) float largest[nf4_blocks_per_slice] = {};
    for (std::size_t b = 0; b < blocks; ++b) {
        Floats m = {};
        for (int r = 0; r < nf4_registers; ++r)
            m = max_floats(abs_floats(values(b, r)), m);  // a NaN never wins
        largest[b] = reduce_max(m);
    }
    alignas(64) std::uint16_t stored[nf4_blocks_per_slice];
    for (std::size_t k = 0; k < nf4_blocks_per_slice; k += float_lanes)
        store_floats(scale + k, round_to_f16(load_floats(largest + k), stored + k));
    for (std::size_t b = 0; b < blocks; ++b) absmax[b] = stored[b];
}

template <class Values>
void nf4_slice(Values values, const float* v, std::size_t blocks, std::uint8_t* packed,
               std::uint16_t* absmax, RepackError& error) {
    alignas(64) float scale[nf4_blocks_per_slice];
    nf4_scales(values, blocks, absmax, scale);
    LaneSums sums;
    for (std::size_t b = 0; b < blocks; ++b) {
        const float* values_b = v + b * nf4_block_elements;
        std::uint8_t* packed_b = packed + b * nf4_block_elements / 2;
        if (scale[b] == 0.0f)
            nf4_zero_block(values_b, packed_b, scale[b], sums);
        else
            nf4_codes(values_b, packed_b, scale[b], sums);
    }
    sums.flush(error, blocks * nf4_block_elements);
}

// ---- Paths ---------------------------------------------------------------------------------

// The f16 scales of the 32 blocks (of `block_bytes` each) a slice spans, widened, at once.
void block_scales(const std::byte* blocks, std::size_t count, std::size_t block_bytes,
                  float* scales) {
    alignas(64) std::uint16_t bits[32] = {};
    for (std::size_t k = 0; k < count; ++k) std::memcpy(&bits[k], blocks + k * block_bytes, 2);
    for (int k = 0; k < 32; k += float_lanes) store_floats(scales + k, load_f16_floats(bits + k));
}

struct SimdKernels {
    static const DequantTable& dequant() { return dequant_table(simd_isa); }

    static void encode_int8(const float* v, std::size_t blocks, std::uint8_t* q,
                            std::uint16_t* min_max, RepackError& error) {
        auto values = [v](std::size_t b, int r) {
            return load_floats(v + b * int8_block_elements + float_lanes * r);
        };
        int8_slice(values, v, blocks, q, min_max, error);
    }

    static void encode_nf4(const float* v, std::size_t blocks, std::uint8_t* packed,
                           std::uint16_t* absmax, RepackError& error) {
        auto values = [v](std::size_t b, int r) {
            return load_floats(v + b * nf4_block_elements + float_lanes * r);
        };
        nf4_slice(values, v, blocks, packed, absmax, error);
    }
};

// Registers per 32-element source block (Q8_0, Q4_0).
constexpr int registers_per_source_block = 32 / float_lanes;

// Q8_0 (d, qs[32]): y = qs * d, decoded while pass 1 reads it; four Q8_0 blocks per Int8 block.
void q8_0_to_int8(const std::byte* source, std::size_t n, std::uint8_t* codes,
                  std::uint16_t* scales, RepackError& error) {
    alignas(64) float buffer[slice_elements];
    auto slice = [&](const std::byte* blocks, const float* d, std::size_t done, std::size_t count) {
        auto values = [&](std::size_t b, int r) {
            const std::size_t source_block = 4 * b + r / registers_per_source_block;
            const int first = float_lanes * (r % registers_per_source_block);
            const __m128i q = load_lane_bytes(blocks + source_block * 34 + 2 + first);
            const Floats x = widen_bytes(q) * splat(d[source_block]);
            store_floats(buffer + b * int8_block_elements + float_lanes * r, x);
            return x;
        };
        int8_slice(values, buffer, count / int8_block_elements, codes + done,
                   scales + scale_count(RepackTarget::int8, done), error);
    };
    for_each_block_slice<34>(source, n, block_scales, slice);
}

// Q4_0 (d, qs[16]): byte j holds element j (low nibble) and j + 16 (high), y = (nibble - 8) * d;
// two Q4_0 blocks per NF4 block.
void q4_0_to_nf4(const std::byte* source, std::size_t n, std::uint8_t* codes, std::uint16_t* scales,
                 RepackError& error) {
    alignas(64) float buffer[slice_elements];
    auto slice = [&](const std::byte* blocks, const float* d, std::size_t done, std::size_t count) {
        auto values = [&](std::size_t b, int r) {
            const std::size_t source_block = 2 * b + r / registers_per_source_block;
            const int first = float_lanes * (r % registers_per_source_block);  // element
            __m128i q = load_lane_bytes(blocks + source_block * 18 + 2 + first % 16);
            if (first >= 16) q = _mm_srli_epi16(q, 4);
            q = _mm_sub_epi8(_mm_and_si128(q, _mm_set1_epi8(0x0f)), _mm_set1_epi8(8));
            const Floats x = widen_bytes(q) * splat(d[source_block]);
            store_floats(buffer + b * nf4_block_elements + float_lanes * r, x);
            return x;
        };
        nf4_slice(values, buffer, count / nf4_block_elements, codes + done / 2,
                  scales + scale_count(RepackTarget::nf4, done), error);
    };
    for_each_block_slice<18>(source, n, block_scales, slice);
}

// The variant's table: every path through its dequantizer and encoders, the two fused paths
// where it has them.
RepackTable simd_repack_table() {
    RepackTable t = build_repack_table<SimdKernels>(simd_isa);
    t.to_int8[static_cast<std::uint32_t>(GgmlType::q8_0)] = q8_0_to_int8;
    t.to_nf4[static_cast<std::uint32_t>(GgmlType::q4_0)] = q4_0_to_nf4;
    return t;
}

}  // namespace
}  // namespace ck::kernels
