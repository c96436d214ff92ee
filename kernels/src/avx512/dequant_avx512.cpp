// AVX-512 (F, BW, DQ, VL) dequantization kernels, bit-identical to the scalar reference (same
// operations, same order, never fused).
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "../simd_tables.hpp"
#include "ck/kernels/float_convert.hpp"

namespace ck::kernels {
namespace {

inline __m512 widen16(__m128i q8) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8));
}

inline void emit16(float* out, __m128i q, float d) {
    _mm512_storeu_ps(out, _mm512_mul_ps(widen16(q), _mm512_set1_ps(d)));
}

inline void emit16_affine(float* out, __m128i q, float d, float m) {
    _mm512_storeu_ps(
        out, _mm512_add_ps(_mm512_mul_ps(widen16(q), _mm512_set1_ps(d)), _mm512_set1_ps(m)));
}

inline void emit16_sub(float* out, __m128i q, float d, float m) {
    _mm512_storeu_ps(
        out, _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(d), widen16(q)), _mm512_set1_ps(m)));
}

#include "../simd_dequant_blocks.inc"

void avx512_f16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(
            y + i,
            _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i))));
    for (; i < n; ++i) y[i] = load_f16(x + 2 * i);
}

void avx512_bf16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i h =
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i)));
        _mm512_storeu_si512(y + i, _mm512_slli_epi32(h, 16));
    }
    for (; i < n; ++i) {
        std::uint16_t b;
        std::memcpy(&b, x + 2 * i, 2);
        y[i] = bf16_to_f32(b);
    }
}

}  // namespace

DequantTable avx512_own_kernels() {
    DequantTable t;
    t.isa = Isa::avx512;
    auto set = [&](GgmlType type, DequantFn fn) { t.fn[static_cast<std::uint32_t>(type)] = fn; };
    set(GgmlType::f16, avx512_f16);
    set(GgmlType::bf16, avx512_bf16);
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
