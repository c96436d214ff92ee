// AVX2 variants of the Q8/Q4 quantizers, compiled with -mavx2 -mf16c and called only when the
// CPU has both (select_quantizers). Bit-identical to the scalar reference in gguflite_codec.cpp:
// the same IEEE division by the same f16-rounded scale, NaN taken as 0, the same clamp, and
// round-to-nearest-even (vroundps instead of the reference's magic-number addition, which gives
// the same integers for the clamped range). Tests compare the two with memcmp.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "gguflite_codec.hpp"

namespace ckplugin::gguflite::avx2 {
using namespace ck;
namespace {

// max(|w|) over n floats; NaN lanes never win (vmaxps returns its second operand when the first
// is NaN), so the order of the comparisons does not matter and the result equals the scalar one.
float absmax(const float* w, std::size_t n) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        m0 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(w + i)), m0);
        m1 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(w + i + 8)), m1);
    }
    for (; i + 8 <= n; i += 8)
        m0 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(w + i)), m0);
    m0 = _mm256_max_ps(m0, m1);
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(m0), _mm256_extractf128_ps(m0, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    float result = _mm_cvtss_f32(m);
    for (; i < n; ++i) {
        const float v = std::fabs(w[i]);
        result = result < v ? v : result;
    }
    return result;
}

// The scale and its f32 value. vcvtps2ph rounds to nearest even like f32_to_f16, and the
// argument is never NaN (absmax skips NaNs), the one input where the two could differ.
inline std::uint16_t scale_of(float absmax_value, float levels, float& s) {
    const __m128i h = _mm_cvtps_ph(_mm_set_ss(absmax_value / levels), _MM_FROUND_TO_NEAREST_INT);
    s = _mm_cvtss_f32(_mm_cvtph_ps(h));
    return static_cast<std::uint16_t>(_mm_cvtsi128_si32(h));
}

// round_half_even(clamp(w / s, lo, hi)) with NaN as 0, as int32 lanes.
inline __m256i quantize8(__m256 w, __m256 s, __m256 lo, __m256 hi) {
    __m256 x = _mm256_div_ps(w, s);
    x = _mm256_and_ps(x, _mm256_cmp_ps(x, x, _CMP_ORD_Q));  // NaN -> +0
    x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
    return _mm256_cvtps_epi32(_mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Four vectors of int32 in -127..127 -> 32 int8 in element order.
inline __m256i narrow32(__m256i a, __m256i b, __m256i c, __m256i d) {
    // packs works inside 128-bit lanes; the dword permute puts the 4-byte groups back in order.
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline void store_fake(float* fake, __m256i q, __m256 s) {
    _mm256_storeu_ps(fake, _mm256_mul_ps(_mm256_cvtepi32_ps(q), s));
}

template <bool with_fake>
std::uint16_t q8_row(const float* w, std::size_t cols, std::int8_t* q, float* fake) {
    float s = 0;
    const std::uint16_t s16 = scale_of(absmax(w, cols), 127.0f, s);
    if (s == 0.0f) {
        std::memset(q, 0, cols);
        if constexpr (with_fake) std::memset(fake, 0, cols * sizeof(float));
        return s16;
    }
    const __m256 sv = _mm256_set1_ps(s), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
    std::size_t j = 0;
    for (; j + 32 <= cols; j += 32) {
        __m256i v[4];
        for (int k = 0; k < 4; ++k) {
            v[k] = quantize8(_mm256_loadu_ps(w + j + 8 * k), sv, lo, hi);
            if constexpr (with_fake) store_fake(fake + j + 8 * k, v[k], sv);
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + j), narrow32(v[0], v[1], v[2], v[3]));
    }
    // The tail with the reference's arithmetic (identical results, see the file comment).
    for (; j < cols; ++j) {
        float x = w[j] / s;
        x = x == x ? x : 0.0f;
        x = x < -127.0f ? -127.0f : x;
        x = x > 127.0f ? 127.0f : x;
        q[j] = static_cast<std::int8_t>((x + 0x1.8p23f) - 0x1.8p23f);
        if constexpr (with_fake) fake[j] = static_cast<float>(q[j]) * s;
    }
    return s16;
}

// 32 int8 in element order -> 16 bytes, the even element in the low nibble.
inline __m128i nibbles(__m256i q) {
    const __m256i low = _mm256_and_si256(q, _mm256_set1_epi16(0x000f));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(q, 4), _mm256_set1_epi16(0x00f0));
    const __m256i words = _mm256_or_si256(low, high);  // one packed byte per 16-bit lane
    return _mm_packus_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
}

template <bool with_fake>
void q4_row(const float* w, std::size_t cols, std::uint16_t* scales, std::uint8_t* packed,
            float* fake) {
    const __m256 lo = _mm256_set1_ps(-8.0f), hi = _mm256_set1_ps(7.0f);
    for (std::size_t g = 0; g < cols / q4_group; ++g) {
        const float* x = w + g * q4_group;
        std::uint8_t* out = packed + g * (q4_group / 2);
        float s = 0;
        const std::uint16_t s16 = scale_of(absmax(x, q4_group), 7.0f, s);
        scales[g] = s16;
        if (s == 0.0f) {
            std::memset(out, 0, q4_group / 2);
            if constexpr (with_fake) std::memset(fake + g * q4_group, 0, q4_group * sizeof(float));
            continue;
        }
        const __m256 sv = _mm256_set1_ps(s);
        __m256i v[8];
        for (int k = 0; k < 8; ++k) {
            v[k] = quantize8(_mm256_loadu_ps(x + 8 * k), sv, lo, hi);
            if constexpr (with_fake) store_fake(fake + g * q4_group + 8 * k, v[k], sv);
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                         nibbles(narrow32(v[0], v[1], v[2], v[3])));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16),
                         nibbles(narrow32(v[4], v[5], v[6], v[7])));
    }
}

}  // namespace

std::uint16_t quantize_q8_row(const float* w, std::size_t cols, std::int8_t* q, float* fake) {
    return fake ? q8_row<true>(w, cols, q, fake) : q8_row<false>(w, cols, q, nullptr);
}

void quantize_q4_row(const float* w, std::size_t cols, std::uint16_t* scales, std::uint8_t* packed,
                     float* fake) {
    if (fake)
        q4_row<true>(w, cols, scales, packed, fake);
    else
        q4_row<false>(w, cols, scales, packed, nullptr);
}

}  // namespace ckplugin::gguflite::avx2
