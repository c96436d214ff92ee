// AVX2 (+F16C) repack encoders: repack_simd_slices.hpp over 8-lane registers, and pass 2 of
// each target (the codes), where AVX2 lacks AVX-512's rounding control and 16-entry permutes.
// The reference's 16 statistics lanes are two registers: elements 0-7 of every 16 go to the
// first, 8-15 to the second.
#define CK_SIMD_FLOAT_LANES 8

#include <immintrin.h>

#include <cstdint>

#include "../repack/nf4_thresholds.hpp"
#include "../repack/repack_simd_slices.hpp"
#include "../repack/repack_simd_tables.hpp"

namespace ck::kernels {
namespace {

// 32 int32 values (0..255) of four registers as 32 bytes in element order.
inline __m256i narrow_to_bytes(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i words = _mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    return _mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// ---- Int8 ----------------------------------------------------------------------------------

// Pass 2 of a block whose max is above its min.
void int8_codes(const float* v, std::uint8_t* q, float mn, float range_value, LaneSums& sums) {
    const __m256 vmn = _mm256_set1_ps(mn), range = _mm256_set1_ps(range_value);
    const __m256 levels = _mm256_set1_ps(255.0f);
    __m256i codes[4];
    for (int r = 0; r < int8_registers; ++r) {
        const __m256 x = _mm256_loadu_ps(v + 8 * r);
        const __m256i code = round_code(int8_scaled(x, vmn, range));
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

// ---- NF4 -----------------------------------------------------------------------------------

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

// Pass 2 of a block whose scale is not 0.
void nf4_codes(const float* v, std::uint8_t* packed, float scale, LaneSums& sums) {
    const __m256 vscale = _mm256_set1_ps(scale);
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

}  // namespace

RepackTable avx2_repack_table() {
    return simd_repack_table();
}

}  // namespace ck::kernels
