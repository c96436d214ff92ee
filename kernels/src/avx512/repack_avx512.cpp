// AVX-512 (F, BW, DQ, VL) repack encoders. The same f32 operations as the scalar reference
// (repack_scalar.cpp), in the same order, never fused: a true division, compares with the
// reference's NaN behaviour (max(t, 0) puts the data first, so a NaN loses), the same rounding
// and the same 16-lane statistics.
//
// A slice (1024 elements) is encoded in two passes: first every block's scale (min/max or
// absmax, rounded to f16 a whole slice at a time), then the codes. One pass per block would
// chain each block's reduction, both conversions and its division back to back, which the
// out-of-order window cannot hide. Q8_0 -> Int8 and Q4_0 -> NF4 decode their source inside the
// first pass instead of in a separate dequantization pass.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "../repack/nf4_thresholds.hpp"
#include "../repack/repack_driver.hpp"
#include "../repack/repack_simd_tables.hpp"

namespace ck::kernels {
namespace {

constexpr std::size_t int8_blocks_per_slice = slice_elements / int8_block_elements;  // 8
constexpr std::size_t nf4_blocks_per_slice = slice_elements / nf4_block_elements;    // 16
constexpr int int8_registers = int8_block_elements / 16;                             // 8
constexpr int nf4_registers = nf4_block_elements / 16;                               // 4

// Lane i + lane i+8, then i + i+4, i + i+2, i + i+1 (reduce_lanes in repack_driver.hpp).
inline float reduce_sum(__m512 v) {
    const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// Min/max of 16 lanes holding no NaN (the order does not matter then). GCC 12's own
// _mm512_reduce_*_ps trip -Wuninitialized inside its headers.
inline float reduce_min(__m512 v) {
    const __m256 m8 = _mm256_min_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_min_ss(m, _mm_movehdup_ps(m)));
}
inline float reduce_max(__m512 v) {
    const __m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// The statistics of one slice in 16 lanes.
struct LaneSums {
    __m512 error = _mm512_setzero_ps(), source = _mm512_setzero_ps(), max_abs = _mm512_setzero_ps();

    void add(__m512 decoded, __m512 x) {
        const __m512 e = _mm512_sub_ps(decoded, x);
        error = _mm512_add_ps(error, _mm512_mul_ps(e, e));
        source = _mm512_add_ps(source, _mm512_mul_ps(x, x));
        max_abs = _mm512_max_ps(_mm512_abs_ps(e), max_abs);  // a NaN error never wins
    }
    void flush(RepackError& into, std::size_t elements) const {
        add_slice_sums(into, reduce_sum(error), reduce_sum(source), reduce_max(max_abs), elements);
    }
};

// q / 255 for codes 0..255, exactly as the f32 division rounds it, without the divider (the
// repack is bound by it; the encoding's own division must stay). In base 256, q / 255 is
// 0.qqqq...; q * 0x01010101 holds its first 32 bits, and since the first bit dropped when
// rounding to 24 significant bits is q's leading one and the infinite tail is never zero, the
// correctly rounded quotient is that integer rounded up, times 2^-32. This returns the integer
// rounded up; the caller folds 2^-32 into its range (exact: a range is 0 or at least 2^-24, the
// smallest f16 step). The variant tests compare the figures with the scalar division bit for bit.
inline __m512 code_over_255_times_2_32(__m512i code) {
    const __m512i low_byte_everywhere =
        _mm512_set4_epi32(0x0c0c0c0c, 0x08080808, 0x04040404, 0x00000000);
    return _mm512_cvt_roundepu32_ps(_mm512_shuffle_epi8(code, low_byte_everywhere),
                                    _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
}

// round_half_away(y) for y in [0, 255] is trunc(y + 0.49999997): y + 0.5 would round
// 0.49999997 itself up to 1.0, and 0.49999997 (0x3effffff) is the largest addend that still
// carries every exact half up. Checked exhaustively over all 2^30 floats in [0, 255].
inline __m512i round_code(__m512 y) {
    return _mm512_cvttps_epi32(
        _mm512_add_ps(y, _mm512_castsi512_ps(_mm512_set1_epi32(0x3effffff))));
}

// ---- Int8 ----------------------------------------------------------------------------------

struct Int8Scales {
    alignas(32) float mn[int8_blocks_per_slice];
    alignas(32) float range[int8_blocks_per_slice];
    __mmask8 spread;  // bit b: max > min in block b
};

// Pass 1: `values(b, r)` gives register r (16 floats) of block b.
template <class Values>
Int8Scales int8_scales(Values values, std::size_t blocks, std::uint16_t* min_max) {
    alignas(32) float low[int8_blocks_per_slice] = {}, high[int8_blocks_per_slice] = {};
    for (std::size_t b = 0; b < blocks; ++b) {
        __m512 lo = _mm512_set1_ps(__builtin_inff()), hi = _mm512_set1_ps(-__builtin_inff());
        for (int r = 0; r < int8_registers; ++r) {
            const __m512 x = values(b, r);
            lo = _mm512_min_ps(x, lo);  // the data first: a NaN element is skipped
            hi = _mm512_max_ps(x, hi);
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
    s.spread = _mm256_cmp_ps_mask(mx, mn, _CMP_GT_OQ);
    return s;
}

// Pass 2 for one block.
void int8_codes(const float* v, std::uint8_t* q, float mn, float range_value, bool spread,
                LaneSums& sums) {
    const __m512 vmn = _mm512_set1_ps(mn), range = _mm512_set1_ps(range_value);
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f),
                 levels = _mm512_set1_ps(255.0f);
    if (!spread) {  // max <= min: every code is 0
        const __m512 decoded =
            _mm512_add_ps(_mm512_mul_ps(_mm512_div_ps(zero, levels), range), vmn);
        for (int r = 0; r < int8_registers; ++r) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * r), _mm_setzero_si128());
            sums.add(decoded, _mm512_loadu_ps(v + 16 * r));
        }
        return;
    }
    const __m512 range_over_2_32 = _mm512_set1_ps(range_value * 0x1p-32f);
    for (int r = 0; r < int8_registers; ++r) {
        const __m512 x = _mm512_loadu_ps(v + 16 * r);
        __m512 t = _mm512_div_ps(_mm512_sub_ps(x, vmn), range);
        t = _mm512_min_ps(_mm512_max_ps(t, zero), one);
        const __m512i code = round_code(_mm512_mul_ps(t, levels));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * r), _mm512_cvtepi32_epi8(code));
        // (q / 255) * range + mn
        const __m512 decoded =
            _mm512_add_ps(_mm512_mul_ps(code_over_255_times_2_32(code), range_over_2_32), vmn);
        sums.add(decoded, x);
    }
}

// `v` holds the slice's values (pass 1 may have just written them there).
template <class Values>
void int8_slice(Values values, const float* v, std::size_t blocks, std::uint8_t* q,
                std::uint16_t* min_max, RepackError& error) {
    const Int8Scales s = int8_scales(values, blocks, min_max);
    LaneSums sums;
    for (std::size_t b = 0; b < blocks; ++b)
        int8_codes(v + b * int8_block_elements, q + b * int8_block_elements, s.mn[b], s.range[b],
                   (s.spread >> b) & 1, sums);
    sums.flush(error, blocks * int8_block_elements);
}

// ---- NF4 -----------------------------------------------------------------------------------

// Pass 1: the f16 absmax of each block; returns them widened (16 blocks: one register).
template <class Values>
__m512 nf4_scales(Values values, std::size_t blocks, std::uint16_t* absmax) {
    alignas(64) float largest[nf4_blocks_per_slice] = {};
    for (std::size_t b = 0; b < blocks; ++b) {
        __m512 m = _mm512_setzero_ps();
        for (int r = 0; r < nf4_registers; ++r)
            m = _mm512_max_ps(_mm512_abs_ps(values(b, r)), m);  // a NaN never wins
        largest[b] = reduce_max(m);
    }
    const __m256i bits = _mm512_cvtps_ph(_mm512_load_ps(largest), _MM_FROUND_TO_NEAREST_INT);
    alignas(32) std::uint16_t stored[nf4_blocks_per_slice];
    _mm256_store_si256(reinterpret_cast<__m256i*>(stored), bits);
    for (std::size_t b = 0; b < blocks; ++b) absmax[b] = stored[b];
    return _mm512_cvtph_ps(bits);
}

// Element 2j in the low nibble of byte j, 2j+1 in the high one, from 16 indices in 16 bytes.
inline __m128i pack_nibbles(__m128i low16, __m128i high16) {
    const __m128i mask_low = _mm_set1_epi16(0x000f), mask_high = _mm_set1_epi16(0x00f0);
    auto pairs = [&](__m128i b) {
        return _mm_or_si128(_mm_and_si128(b, mask_low),
                            _mm_and_si128(_mm_srli_epi16(b, 4), mask_high));
    };
    return _mm_packus_epi16(pairs(low16), pairs(high16));
}

// Pass 2 for one block.
void nf4_codes(const float* v, std::uint8_t* packed, float scale, LaneSums& sums) {
    const __m512 vscale = _mm512_set1_ps(scale);
    if (scale == 0.0f) {  // every index is 7 (0.0)
        const __m512 decoded = _mm512_mul_ps(_mm512_set1_ps(nf4_codebook[7]), vscale);
        for (int r = 0; r < nf4_registers; ++r) sums.add(decoded, _mm512_loadu_ps(v + 16 * r));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(packed), _mm256_set1_epi8(0x77));
        return;
    }
    const __m512 thresholds = _mm512_loadu_ps(nf4::thresholds.data());
    const __m512 codebook = _mm512_loadu_ps(nf4_codebook.data());
    __m128i indices[nf4_registers];
    for (int r = 0; r < nf4_registers; ++r) {
        const __m512 x = _mm512_loadu_ps(v + 16 * r);
        const __m512 t = _mm512_div_ps(x, vscale);
        // Binary search over the thresholds, as nf4::index_of: index = thresholds <= t.
        __m512i i = _mm512_setzero_si512();
        auto step = [&](int width, int offset) {
            const __m512 bound =
                _mm512_permutexvar_ps(_mm512_add_epi32(i, _mm512_set1_epi32(offset)), thresholds);
            i = _mm512_mask_add_epi32(i, _mm512_cmp_ps_mask(t, bound, _CMP_GE_OQ), i,
                                      _mm512_set1_epi32(width));
        };
        step(8, 7);
        step(4, 3);
        step(2, 1);
        step(1, 0);
        indices[r] = _mm512_cvtepi32_epi8(i);
        sums.add(_mm512_mul_ps(_mm512_permutexvar_ps(i, codebook), vscale), x);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(packed), pack_nibbles(indices[0], indices[1]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(packed + 16), pack_nibbles(indices[2], indices[3]));
}

template <class Values>
void nf4_slice(Values values, const float* v, std::size_t blocks, std::uint8_t* packed,
               std::uint16_t* absmax, RepackError& error) {
    alignas(64) float scale[nf4_blocks_per_slice];
    _mm512_store_ps(scale, nf4_scales(values, blocks, absmax));
    LaneSums sums;
    for (std::size_t b = 0; b < blocks; ++b)
        nf4_codes(v + b * nf4_block_elements, packed + b * nf4_block_elements / 2, scale[b], sums);
    sums.flush(error, blocks * nf4_block_elements);
}

// ---- Paths ---------------------------------------------------------------------------------

// The f16 scales of the 32 blocks (of `block_bytes` each) a slice spans, widened, at once.
void block_scales(const std::byte* blocks, std::size_t count, std::size_t block_bytes,
                  float* scales) {
    alignas(64) std::uint16_t bits[32] = {};
    for (std::size_t k = 0; k < count; ++k) std::memcpy(&bits[k], blocks + k * block_bytes, 2);
    for (int half = 0; half < 2; ++half)
        _mm512_store_ps(
            scales + 16 * half,
            _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(bits + 16 * half))));
}

struct Avx512Kernels {
    static const DequantTable& dequant() { return dequant_table(Isa::avx512); }

    static void encode_int8(const float* v, std::size_t blocks, std::uint8_t* q,
                            std::uint16_t* min_max, RepackError& error) {
        auto values = [v](std::size_t b, int r) {
            return _mm512_loadu_ps(v + b * int8_block_elements + 16 * r);
        };
        int8_slice(values, v, blocks, q, min_max, error);
    }

    static void encode_nf4(const float* v, std::size_t blocks, std::uint8_t* packed,
                           std::uint16_t* absmax, RepackError& error) {
        auto values = [v](std::size_t b, int r) {
            return _mm512_loadu_ps(v + b * nf4_block_elements + 16 * r);
        };
        nf4_slice(values, v, blocks, packed, absmax, error);
    }
};

// Q8_0 (d, qs[32]): y = qs * d, decoded while pass 1 reads it; four Q8_0 blocks per Int8 block.
void q8_0_to_int8(const std::byte* source, std::size_t n, std::uint8_t* codes,
                  std::uint16_t* scales, RepackError& error) {
    alignas(64) float buffer[slice_elements];
    auto slice = [&](const std::byte* blocks, const float* d, std::size_t done, std::size_t count) {
        auto values = [&](std::size_t b, int r) {
            const std::byte* block = blocks + (4 * b + r / 2) * 34;
            const __m128i q =
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + 16 * (r % 2)));
            const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)),
                                           _mm512_set1_ps(d[4 * b + r / 2]));
            _mm512_store_ps(buffer + b * int8_block_elements + 16 * r, x);
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
            const std::byte* block = blocks + (2 * b + r / 2) * 18;
            __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
            if (r % 2) q = _mm_srli_epi16(q, 4);
            q = _mm_sub_epi8(_mm_and_si128(q, _mm_set1_epi8(0x0f)), _mm_set1_epi8(8));
            const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)),
                                           _mm512_set1_ps(d[2 * b + r / 2]));
            _mm512_store_ps(buffer + b * nf4_block_elements + 16 * r, x);
            return x;
        };
        nf4_slice(values, buffer, count / nf4_block_elements, codes + done / 2,
                  scales + scale_count(RepackTarget::nf4, done), error);
    };
    for_each_block_slice<18>(source, n, block_scales, slice);
}

}  // namespace

RepackTable avx512_repack_table() {
    RepackTable t = build_repack_table<Avx512Kernels>(Isa::avx512);
    t.to_int8[static_cast<std::uint32_t>(GgmlType::q8_0)] = q8_0_to_int8;
    t.to_nf4[static_cast<std::uint32_t>(GgmlType::q4_0)] = q4_0_to_nf4;
    return t;
}

}  // namespace ck::kernels
