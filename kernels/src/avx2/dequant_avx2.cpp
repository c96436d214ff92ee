// AVX2 (+F16C) dequantization kernels. Bit-identical to the scalar reference: the same f32
// operations in the same order, multiplies and adds kept separate (-ffp-contract=off and no
// FMA intrinsics).
#include <immintrin.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <utility>

#include "../simd_tables.hpp"

namespace ck::kernels {
namespace {

// This unit is compiled with its ISA's flags, so it must not include headers with inline
// functions the baseline code also uses (such as float_convert.hpp): the linker could keep this
// unit's copy for everyone and run AVX instructions before the CPU check. Helpers live here, in
// the anonymous namespace.

inline __m256 widen8(__m128i q8) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8));
}

template <bool Stream>
inline void store8(float* out, __m256 v) {
    if constexpr (Stream)
        _mm256_stream_ps(out, v);
    else
        _mm256_storeu_ps(out, v);
}

template <bool S>
inline void emit16(float* out, __m128i q, float d) {
    const __m256 vd = _mm256_set1_ps(d);
    store8<S>(out, _mm256_mul_ps(widen8(q), vd));
    store8<S>(out + 8, _mm256_mul_ps(widen8(_mm_srli_si128(q, 8)), vd));
}

// product + m keeping the product's NaN when both are NaN, as ggml's scalar code computes it:
// a compiler may swap the operands of an add intrinsic (Clang does), so the NaN is put back.
inline __m256 add_offset(__m256 product, __m256 m) {
    const __m256 nan = _mm256_cmp_ps(product, product, _CMP_UNORD_Q);
    return _mm256_blendv_ps(_mm256_add_ps(product, m), product, nan);
}

template <bool S>
inline void emit16_affine(float* out, __m128i q, float d, float m) {
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    store8<S>(out, add_offset(_mm256_mul_ps(widen8(q), vd), vm));
    store8<S>(out + 8, add_offset(_mm256_mul_ps(widen8(_mm_srli_si128(q, 8)), vd), vm));
}

template <bool S>
inline void emit16_sub(float* out, __m128i q, float d, float m) {
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    store8<S>(out, _mm256_sub_ps(_mm256_mul_ps(vd, widen8(q)), vm));
    store8<S>(out + 8, _mm256_sub_ps(_mm256_mul_ps(vd, widen8(_mm_srli_si128(q, 8))), vm));
}

// Byte-level helpers the shared block code needs (see simd_dequant_blocks.inc).
inline __m128i bits_to_0x10(std::uint32_t qh, int first) {
    const __m128i spread =
        _mm_shuffle_epi8(_mm_cvtsi32_si128(static_cast<int>(qh >> first)),
                         _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
    const __m128i select =
        _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    return _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(spread, select), select),
                         _mm_set1_epi8(0x10));
}

inline __m128i bytes_with_bit(__m128i qh, __m128i u) {
    return _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(qh, u), u), _mm_set1_epi8(0x10));
}

#include "../simd_dequant_blocks.inc"

template <bool S>
void avx2_f16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        store8<S>(y + i,
                  _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 2 * i))));
    for (; i < n; ++i) y[i] = load_f16(x + 2 * i);
}

template <bool S>
void avx2_bf16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i h =
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 2 * i)));
        store8<S>(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
    }
    for (; i < n; ++i) {
        std::uint16_t b;
        std::memcpy(&b, x + 2 * i, 2);
        y[i] = std::bit_cast<float>(std::uint32_t(b) << 16);
    }
}

}  // namespace

DequantTable avx2_own_kernels() {
    return variant_table(Isa::avx2, CK_DEQUANT_KERNEL(avx2_f16), CK_DEQUANT_KERNEL(avx2_bf16));
}

}  // namespace ck::kernels
