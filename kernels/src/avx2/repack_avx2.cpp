// AVX2 (+F16C) repack encoders: the scalar reference's f32 operations in the same order, never
// fused, 8 lanes wide, in the two passes per slice of repack_avx512.cpp (scales first, then
// codes; Q8_0 and Q4_0 decoded inside the first pass). The 16 statistics lanes of the reference
// are two registers: elements 0-7 of every 16 go to the first, 8-15 to the second.
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
constexpr int int8_registers = int8_block_elements / 8;                              // 16
constexpr int nf4_registers = nf4_block_elements / 8;                                // 8

// The reduction tree of reduce_lanes: lanes i + i+8 is low + high, then i + i+4, i + i+2, i + i+1.
inline float reduce_sum(__m256 low, __m256 high) {
    const __m256 s8 = _mm256_add_ps(low, high);
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// Min/max of 8 lanes holding no NaN (the order does not matter then).
inline float reduce_min(__m256 v) {
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_min_ss(m, _mm_movehdup_ps(m)));
}
inline float reduce_max(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

inline __m256 abs_ps(__m256 v) {
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

struct LaneSums {
    __m256 error[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 source[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 max_abs = _mm256_setzero_ps();

    // Register r of a block holds elements 8r..8r+7: lanes 0-7 for even r, 8-15 for odd r.
    void add(int r, __m256 decoded, __m256 x) {
        const __m256 e = _mm256_sub_ps(decoded, x);
        error[r & 1] = _mm256_add_ps(error[r & 1], _mm256_mul_ps(e, e));
        source[r & 1] = _mm256_add_ps(source[r & 1], _mm256_mul_ps(x, x));
        max_abs = _mm256_max_ps(abs_ps(e), max_abs);  // a NaN error never wins
    }
    void flush(RepackError& into, std::size_t elements) const {
        add_slice_sums(into, reduce_sum(error[0], error[1]), reduce_sum(source[0], source[1]),
                       reduce_max(max_abs), elements);
    }
};

// 32 int32 values (0..255) of four registers as 32 bytes in element order.
inline __m256i narrow_to_bytes(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i words = _mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    return _mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// round_half_away(y) for y in [0, 255] is trunc(y + 0.49999997) (see repack_avx512.cpp).
inline __m256i round_code(__m256 y) {
    return _mm256_cvttps_epi32(
        _mm256_add_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32(0x3effffff))));
}

// ---- Int8 ----------------------------------------------------------------------------------

struct Int8Scales {
    alignas(32) float mn[int8_blocks_per_slice];
    alignas(32) float range[int8_blocks_per_slice];
    int spread;  // bit b: max > min in block b
};

// Pass 1: `values(b, r)` gives register r (8 floats) of block b.
template <class Values>
Int8Scales int8_scales(Values values, std::size_t blocks, std::uint16_t* min_max) {
    alignas(32) float low[int8_blocks_per_slice] = {}, high[int8_blocks_per_slice] = {};
    for (std::size_t b = 0; b < blocks; ++b) {
        __m256 lo = _mm256_set1_ps(__builtin_inff()), hi = _mm256_set1_ps(-__builtin_inff());
        for (int r = 0; r < int8_registers; ++r) {
            const __m256 x = values(b, r);
            lo = _mm256_min_ps(x, lo);  // the data first: a NaN element is skipped
            hi = _mm256_max_ps(x, hi);
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

// Pass 2 for one block.
void int8_codes(const float* v, std::uint8_t* q, float mn, float range_value, bool spread,
                LaneSums& sums) {
    const __m256 vmn = _mm256_set1_ps(mn), range = _mm256_set1_ps(range_value);
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f),
                 levels = _mm256_set1_ps(255.0f);
    if (!spread) {  // max <= min: every code is 0
        const __m256 decoded =
            _mm256_add_ps(_mm256_mul_ps(_mm256_div_ps(zero, levels), range), vmn);
        for (int r = 0; r < int8_registers; ++r) sums.add(r, decoded, _mm256_loadu_ps(v + 8 * r));
        for (int r = 0; r < int8_registers; r += 4)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 8 * r), _mm256_setzero_si256());
        return;
    }
    __m256i codes[4];
    for (int r = 0; r < int8_registers; ++r) {
        const __m256 x = _mm256_loadu_ps(v + 8 * r);
        __m256 t = _mm256_div_ps(_mm256_sub_ps(x, vmn), range);
        t = _mm256_min_ps(_mm256_max_ps(t, zero), one);
        const __m256i code = round_code(_mm256_mul_ps(t, levels));
        codes[r & 3] = code;
        // (q / 255) * range + mn: without AVX-512's rounding control the quotient stays a division.
        const __m256 decoded = _mm256_add_ps(
            _mm256_mul_ps(_mm256_div_ps(_mm256_cvtepi32_ps(code), levels), range), vmn);
        sums.add(r, decoded, x);
        if ((r & 3) == 3)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 8 * (r - 3)),
                                narrow_to_bytes(codes[0], codes[1], codes[2], codes[3]));
    }
}

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

// Pass 1: the f16 absmax of each block, stored, and widened into `scale`.
template <class Values>
void nf4_scales(Values values, std::size_t blocks, std::uint16_t* absmax, float* scale) {
    alignas(32) float largest[nf4_blocks_per_slice] = {};
    for (std::size_t b = 0; b < blocks; ++b) {
        __m256 m = _mm256_setzero_ps();
        for (int r = 0; r < nf4_registers; ++r)
            m = _mm256_max_ps(abs_ps(values(b, r)), m);  // a NaN never wins
        largest[b] = reduce_max(m);
    }
    alignas(32) std::uint16_t stored[nf4_blocks_per_slice];
    for (std::size_t half = 0; half < 2; ++half) {
        const __m128i bits =
            _mm256_cvtps_ph(_mm256_load_ps(largest + 8 * half), _MM_FROUND_TO_NEAREST_INT);
        _mm_store_si128(reinterpret_cast<__m128i*>(stored + 8 * half), bits);
        _mm256_storeu_ps(scale + 8 * half, _mm256_cvtph_ps(bits));
    }
    for (std::size_t b = 0; b < blocks; ++b) absmax[b] = stored[b];
}

// Element 2j in the low nibble of byte j, 2j+1 in the high one: 64 indices (bytes, in element
// order) become 32 bytes.
inline __m256i pack_nibbles(__m256i first32, __m256i second32) {
    const __m256i mask_low = _mm256_set1_epi16(0x000f), mask_high = _mm256_set1_epi16(0x00f0);
    auto pairs = [&](__m256i b) {
        return _mm256_or_si256(_mm256_and_si256(b, mask_low),
                               _mm256_and_si256(_mm256_srli_epi16(b, 4), mask_high));
    };
    return _mm256_permute4x64_epi64(_mm256_packus_epi16(pairs(first32), pairs(second32)),
                                    _MM_SHUFFLE(3, 1, 2, 0));
}

// Pass 2 for one block.
void nf4_codes(const float* v, std::uint8_t* packed, float scale, LaneSums& sums) {
    const __m256 vscale = _mm256_set1_ps(scale);
    if (scale == 0.0f) {  // every index is 7 (0.0)
        const __m256 decoded = _mm256_mul_ps(_mm256_set1_ps(nf4_codebook[7]), vscale);
        for (int r = 0; r < nf4_registers; ++r) sums.add(r, decoded, _mm256_loadu_ps(v + 8 * r));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(packed), _mm256_set1_epi8(0x77));
        return;
    }
    // The thresholds each step of the binary search (nf4::index_of) can need, indexed by the
    // bits of the index found so far: t[7]; t[3], t[11]; t[1], t[5], t[9], t[13]; t[0], t[2]...
    const auto& t = nf4::thresholds;
    const __m256 step8 = _mm256_set1_ps(t[7]);
    const __m256 step4 = _mm256_setr_ps(t[3], t[11], 0, 0, 0, 0, 0, 0);
    const __m256 step2 = _mm256_setr_ps(t[1], t[5], t[9], t[13], 0, 0, 0, 0);
    const __m256 step1 = _mm256_setr_ps(t[0], t[2], t[4], t[6], t[8], t[10], t[12], t[14]);
    const __m256 codebook_low = _mm256_loadu_ps(nf4_codebook.data());
    const __m256 codebook_high = _mm256_loadu_ps(nf4_codebook.data() + 8);
    __m256i indices[nf4_registers];
    for (int r = 0; r < nf4_registers; ++r) {
        const __m256 x = _mm256_loadu_ps(v + 8 * r);
        const __m256 y = _mm256_div_ps(x, vscale);
        auto at_least = [&](__m256 bound, int width) {
            return _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(y, bound, _CMP_GE_OQ)),
                                    _mm256_set1_epi32(width));
        };
        __m256i i = at_least(step8, 8);
        i = _mm256_add_epi32(i,
                             at_least(_mm256_permutevar8x32_ps(step4, _mm256_srli_epi32(i, 3)), 4));
        i = _mm256_add_epi32(i,
                             at_least(_mm256_permutevar8x32_ps(step2, _mm256_srli_epi32(i, 2)), 2));
        i = _mm256_add_epi32(i,
                             at_least(_mm256_permutevar8x32_ps(step1, _mm256_srli_epi32(i, 1)), 1));
        indices[r] = i;
        // codebook[i]: the low or the high half by bit 3 of i (moved to the sign bit).
        const __m256 entry = _mm256_blendv_ps(_mm256_permutevar8x32_ps(codebook_low, i),
                                              _mm256_permutevar8x32_ps(codebook_high, i),
                                              _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
        sums.add(r, _mm256_mul_ps(entry, vscale), x);
    }
    const __m256i first32 = narrow_to_bytes(indices[0], indices[1], indices[2], indices[3]);
    const __m256i second32 = narrow_to_bytes(indices[4], indices[5], indices[6], indices[7]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(packed), pack_nibbles(first32, second32));
}

template <class Values>
void nf4_slice(Values values, const float* v, std::size_t blocks, std::uint8_t* packed,
               std::uint16_t* absmax, RepackError& error) {
    alignas(32) float scale[nf4_blocks_per_slice];
    nf4_scales(values, blocks, absmax, scale);
    LaneSums sums;
    for (std::size_t b = 0; b < blocks; ++b)
        nf4_codes(v + b * nf4_block_elements, packed + b * nf4_block_elements / 2, scale[b], sums);
    sums.flush(error, blocks * nf4_block_elements);
}

// ---- Paths ---------------------------------------------------------------------------------

// The f16 scales of the 32 blocks (of `block_bytes` each) a slice spans, widened, at once.
void block_scales(const std::byte* blocks, std::size_t count, std::size_t block_bytes,
                  float* scales) {
    alignas(32) std::uint16_t bits[32] = {};
    for (std::size_t k = 0; k < count; ++k) std::memcpy(&bits[k], blocks + k * block_bytes, 2);
    for (int quarter = 0; quarter < 4; ++quarter)
        _mm256_store_ps(
            scales + 8 * quarter,
            _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(bits + 8 * quarter))));
}

inline __m256 widen8(__m128i bytes) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
}

struct Avx2Kernels {
    static const DequantTable& dequant() { return dequant_table(Isa::avx2); }

    static void encode_int8(const float* v, std::size_t blocks, std::uint8_t* q,
                            std::uint16_t* min_max, RepackError& error) {
        auto values = [v](std::size_t b, int r) {
            return _mm256_loadu_ps(v + b * int8_block_elements + 8 * r);
        };
        int8_slice(values, v, blocks, q, min_max, error);
    }

    static void encode_nf4(const float* v, std::size_t blocks, std::uint8_t* packed,
                           std::uint16_t* absmax, RepackError& error) {
        auto values = [v](std::size_t b, int r) {
            return _mm256_loadu_ps(v + b * nf4_block_elements + 8 * r);
        };
        nf4_slice(values, v, blocks, packed, absmax, error);
    }
};

// Q8_0 (d, qs[32]): y = qs * d, decoded while pass 1 reads it; four Q8_0 blocks per Int8 block.
void q8_0_to_int8(const std::byte* source, std::size_t n, std::uint8_t* codes,
                  std::uint16_t* scales, RepackError& error) {
    alignas(32) float buffer[slice_elements];
    auto slice = [&](const std::byte* blocks, const float* d, std::size_t done, std::size_t count) {
        auto values = [&](std::size_t b, int r) {
            const std::byte* block = blocks + (4 * b + r / 4) * 34;
            const __m128i q =
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 2 + 8 * (r % 4)));
            const __m256 x = _mm256_mul_ps(widen8(q), _mm256_set1_ps(d[4 * b + r / 4]));
            _mm256_store_ps(buffer + b * int8_block_elements + 8 * r, x);
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
    alignas(32) float buffer[slice_elements];
    auto slice = [&](const std::byte* blocks, const float* d, std::size_t done, std::size_t count) {
        auto values = [&](std::size_t b, int r) {
            // Register r: Q4_0 block 2b + r/4; elements 0-7, 8-15 (low nibbles), 16-23, 24-31.
            const std::byte* block = blocks + (2 * b + r / 4) * 18;
            __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 2 + 8 * (r % 2)));
            if (r % 4 >= 2) q = _mm_srli_epi16(q, 4);
            q = _mm_sub_epi8(_mm_and_si128(q, _mm_set1_epi8(0x0f)), _mm_set1_epi8(8));
            const __m256 x = _mm256_mul_ps(widen8(q), _mm256_set1_ps(d[2 * b + r / 4]));
            _mm256_store_ps(buffer + b * nf4_block_elements + 8 * r, x);
            return x;
        };
        nf4_slice(values, buffer, count / nf4_block_elements, codes + done / 2,
                  scales + scale_count(RepackTarget::nf4, done), error);
    };
    for_each_block_slice<18>(source, n, block_scales, slice);
}

}  // namespace

RepackTable avx2_repack_table() {
    RepackTable t = build_repack_table<Avx2Kernels>(Isa::avx2);
    t.to_int8[static_cast<std::uint32_t>(GgmlType::q8_0)] = q8_0_to_int8;
    t.to_nf4[static_cast<std::uint32_t>(GgmlType::q4_0)] = q4_0_to_nf4;
    return t;
}

}  // namespace ck::kernels
