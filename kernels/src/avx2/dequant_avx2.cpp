// AVX2 (+F16C) dequantization kernels. Bit-identical to the scalar reference: the same f32
// operations in the same order, multiplies and adds kept separate (-ffp-contract=off and no
// FMA intrinsics).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "../simd_tables.hpp"
#include "ck/kernels/float_convert.hpp"

namespace ck::kernels {
namespace {

inline __m256 widen8(__m128i q8) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8));
}

inline void emit16(float* out, __m128i q, float d) {
    const __m256 vd = _mm256_set1_ps(d);
    _mm256_storeu_ps(out, _mm256_mul_ps(widen8(q), vd));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(widen8(_mm_srli_si128(q, 8)), vd));
}

inline void emit16_affine(float* out, __m128i q, float d, float m) {
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_mul_ps(widen8(q), vd), vm));
    _mm256_storeu_ps(out + 8, _mm256_add_ps(_mm256_mul_ps(widen8(_mm_srli_si128(q, 8)), vd), vm));
}

inline void emit16_sub(float* out, __m128i q, float d, float m) {
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    _mm256_storeu_ps(out, _mm256_sub_ps(_mm256_mul_ps(vd, widen8(q)), vm));
    _mm256_storeu_ps(out + 8, _mm256_sub_ps(_mm256_mul_ps(vd, widen8(_mm_srli_si128(q, 8))), vm));
}

#include "../simd_dequant_blocks.inc"

void avx2_f16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(
            y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 2 * i))));
    for (; i < n; ++i) y[i] = load_f16(x + 2 * i);
}

void avx2_bf16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i h =
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 2 * i)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_slli_epi32(h, 16));
    }
    for (; i < n; ++i) {
        std::uint16_t b;
        std::memcpy(&b, x + 2 * i, 2);
        y[i] = bf16_to_f32(b);
    }
}

}  // namespace

DequantTable avx2_own_kernels() {
    DequantTable t;
    t.isa = Isa::avx2;
    auto set = [&](GgmlType type, DequantFn fn) { t.fn[static_cast<std::uint32_t>(type)] = fn; };
    set(GgmlType::f16, avx2_f16);
    set(GgmlType::bf16, avx2_bf16);
    set(GgmlType::q4_0, simd_q4_0);
    set(GgmlType::q4_1, simd_q4_1);
    set(GgmlType::q5_0, simd_q5_0);
    set(GgmlType::q5_1, simd_q5_1);
    set(GgmlType::q8_0, simd_q8_0);
    set(GgmlType::iq4_nl, simd_iq4_nl);
    set(GgmlType::q4_k, simd_q4_k);
    set(GgmlType::q5_k, simd_q5_k);
    set(GgmlType::q6_k, simd_q6_k);
    return t;
}

}  // namespace ck::kernels
