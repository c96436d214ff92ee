// AVX-512 (F, BW, DQ, VL) repack encoders: repack_simd_slices.hpp over 16-lane registers, and
// pass 2 of each target (the codes), which uses AVX-512's rounding control and 16-entry
// permutes. The same f32 operations as the scalar reference (repack_scalar.cpp), in the same
// order, never fused: a true division, compares with the reference's NaN behaviour (max(t, 0)
// puts the data first, so a NaN loses), the same rounding and the same 16-lane statistics.
#define CK_SIMD_FLOAT_LANES 16

#include <immintrin.h>

#include <cstdint>

#include "../repack/nf4_thresholds.hpp"
#include "../repack/repack_simd_slices.hpp"
#include "../repack/repack_simd_tables.hpp"

namespace ck::kernels {
namespace {

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

// ---- Int8 ----------------------------------------------------------------------------------

// Pass 2 of a block whose max is above its min.
void int8_codes(const float* v, std::uint8_t* q, float mn, float range_value, LaneSums& sums) {
    const __m512 vmn = _mm512_set1_ps(mn), range = _mm512_set1_ps(range_value);
    const __m512 range_over_2_32 = _mm512_set1_ps(range_value * 0x1p-32f);
    for (int r = 0; r < int8_registers; ++r) {
        const __m512 x = _mm512_loadu_ps(v + 16 * r);
        const __m512i code = round_code(int8_scaled(x, vmn, range));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * r), _mm512_cvtepi32_epi8(code));
        // (q / 255) * range + mn
        const __m512 decoded =
            _mm512_add_ps(_mm512_mul_ps(code_over_255_times_2_32(code), range_over_2_32), vmn);
        sums.add(r, decoded, x);
    }
}

// ---- NF4 -----------------------------------------------------------------------------------

// Element 2j in the low nibble of byte j, 2j+1 in the high one, from 16 indices in 16 bytes.
inline __m128i pack_nibbles(__m128i low16, __m128i high16) {
    const __m128i mask_low = _mm_set1_epi16(0x000f), mask_high = _mm_set1_epi16(0x00f0);
    auto pairs = [&](__m128i b) {
        return _mm_or_si128(_mm_and_si128(b, mask_low),
                            _mm_and_si128(_mm_srli_epi16(b, 4), mask_high));
    };
    return _mm_packus_epi16(pairs(low16), pairs(high16));
}

// Pass 2 of a block whose scale is not 0.
void nf4_codes(const float* v, std::uint8_t* packed, float scale, LaneSums& sums) {
    const __m512 vscale = _mm512_set1_ps(scale);
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
        sums.add(r, _mm512_mul_ps(_mm512_permutexvar_ps(i, codebook), vscale), x);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(packed), pack_nibbles(indices[0], indices[1]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(packed + 16), pack_nibbles(indices[2], indices[3]));
}

}  // namespace

RepackTable avx512_repack_table() {
    return simd_repack_table();
}

}  // namespace ck::kernels
