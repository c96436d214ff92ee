// AVX-512 (F, BW, DQ, VL) dequantization kernels, bit-identical to the scalar reference (same
// operations, same order, never fused).
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

inline __m512 widen16(__m128i q8) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8));
}

template <bool Stream>
inline void store16(float* out, __m512 v) {
    if constexpr (Stream)
        _mm512_stream_ps(out, v);
    else
        _mm512_storeu_ps(out, v);
}

template <bool S>
inline void emit16(float* out, __m128i q, float d) {
    store16<S>(out, _mm512_mul_ps(widen16(q), _mm512_set1_ps(d)));
}

// product + m keeping the product's NaN when both are NaN, as ggml's scalar code computes it:
// a compiler may swap the operands of an add intrinsic (Clang does), so the NaN is put back.
template <bool S>
inline void emit16_affine(float* out, __m128i q, float d, float m) {
    const __m512 product = _mm512_mul_ps(widen16(q), _mm512_set1_ps(d));
    const __mmask16 nan = _mm512_cmp_ps_mask(product, product, _CMP_UNORD_Q);
    store16<S>(out, _mm512_mask_mov_ps(_mm512_add_ps(product, _mm512_set1_ps(m)), nan, product));
}

template <bool S>
inline void emit16_sub(float* out, __m128i q, float d, float m) {
    store16<S>(out, _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(d), widen16(q)), _mm512_set1_ps(m)));
}

// Byte-level helpers the shared block code needs (see simd_dequant_blocks.inc): AVX-512BW
// turns bits into bytes through a mask register in one instruction.
inline __m128i bits_to_0x10(std::uint32_t qh, int first) {
    return _mm_maskz_mov_epi8(static_cast<__mmask16>(qh >> first), _mm_set1_epi8(0x10));
}

inline __m128i bytes_with_bit(__m128i qh, __m128i u) {
    return _mm_maskz_mov_epi8(_mm_test_epi8_mask(qh, u), _mm_set1_epi8(0x10));
}

#include "../simd_dequant_blocks.inc"

template <bool S>
void avx512_f16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
        store16<S>(y + i, _mm512_cvtph_ps(
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i))));
    for (; i < n; ++i) y[i] = load_f16(x + 2 * i);
}

template <bool S>
void avx512_bf16(const std::byte* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i h =
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i)));
        store16<S>(y + i, _mm512_castsi512_ps(_mm512_slli_epi32(h, 16)));
    }
    for (; i < n; ++i) {
        std::uint16_t b;
        std::memcpy(&b, x + 2 * i, 2);
        y[i] = std::bit_cast<float>(std::uint32_t(b) << 16);
    }
}

}  // namespace

DequantTable avx512_own_kernels() {
    return variant_table(Isa::avx512, CK_DEQUANT_KERNEL(avx512_f16),
                         CK_DEQUANT_KERNEL(avx512_bf16));
}

}  // namespace ck::kernels
