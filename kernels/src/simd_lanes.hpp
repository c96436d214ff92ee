// The operations on the unit's float register (simd_width.hpp) that the shared SIMD code
// (simd_dequant_blocks.inc, repack/repack_simd_slices.hpp) is written with, each once for both
// widths. Internal linkage, as simd_width.hpp explains.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "simd_width.hpp"

namespace ck::kernels {
namespace {

inline Floats splat(float v) {
    return CK_SIMD(set1_ps)(v);
}

inline Floats load_floats(const float* p) {
    return CK_SIMD(loadu_ps)(p);
}

// Ordinary stores, or (Stream) non-temporal ones to a 64-byte aligned `out`.
template <bool Stream = false>
inline void store_floats(float* out, Floats v) {
    if constexpr (Stream)
        CK_SIMD(stream_ps)(out, v);
    else
        CK_SIMD(storeu_ps)(out, v);
}

// minps / maxps: `m` whenever either lane is NaN, so with the data as `x` a NaN is skipped.
inline Floats min_floats(Floats x, Floats m) {
    return CK_SIMD(min_ps)(x, m);
}
inline Floats max_floats(Floats x, Floats m) {
    return CK_SIMD(max_ps)(x, m);
}

inline Floats abs_floats(Floats v) {
    return CK_SIMD(andnot_ps)(splat(-0.0f), v);
}

// The first float_lanes int8 values of q, as floats (exact).
inline Floats widen_bytes(__m128i q) {
    return CK_SIMD(cvtepi32_ps)(CK_SIMD(cvtepi8_epi32)(q));
}

// float_lanes bytes from p, at the bottom of the register.
inline __m128i load_lane_bytes(const void* p) {
    const auto* bytes = static_cast<const __m128i*>(p);
    if constexpr (float_lanes == 16) return _mm_loadu_si128(bytes);
    return _mm_loadl_epi64(bytes);
}

inline HalfInts load_half_ints(const void* p) {
    HalfInts h;
    std::memcpy(&h, p, sizeof h);
    return h;
}

// float_lanes f16 values from p, widened exactly (F16C: a signalling NaN comes out quiet with
// its payload, as f16_to_f32 does).
inline Floats load_f16_floats(const void* p) {
    return CK_SIMD(cvtph_ps)(load_half_ints(p));
}

// float_lanes bf16 values from p: the upper halves of f32 values.
inline Floats load_bf16_floats(const void* p) {
    const Ints words = CK_SIMD(cvtepu16_epi32)(load_half_ints(p));
    return reinterpret_cast<Floats>(CK_SIMD(slli_epi32)(words, 16));
}

// v rounded to f16 (nearest even), stored at `bits` (float_lanes values), and widened again.
inline Floats round_to_f16(Floats v, std::uint16_t* bits) {
    const HalfInts h = CK_SIMD(cvtps_ph)(v, _MM_FROUND_TO_NEAREST_INT);
    std::memcpy(bits, &h, sizeof h);
    return CK_SIMD(cvtph_ps)(h);
}

// The lanes of v folded onto 8 by `op` (lane i with lane i + 8); 8 lanes stay as they are.
template <class Op>
inline __m256 fold_to_8(Floats v, [[maybe_unused]] Op op) {
    __m256 low;
    std::memcpy(&low, &v, sizeof low);
    if constexpr (float_lanes == 16) {
        __m256 high;
        std::memcpy(&high, reinterpret_cast<const char*>(&v) + sizeof low, sizeof high);
        return op(low, high);
    }
    return low;
}

// Lane 0 of 8 lanes folded: i with i+4 by op4, then i+2 by op4, then i+1 by op1.
template <class Op4, class Op1>
inline float fold_8(__m256 v, Op4 op4, Op1 op1) {
    __m128 m = op4(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = op4(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(op1(m, _mm_movehdup_ps(m)));
}

// Min/max of the lanes of v, which hold no NaN (the order does not matter then). GCC 12's own
// _mm512_reduce_*_ps trip -Wuninitialized inside its headers.
inline float reduce_min(Floats v) {
    return fold_8(
        fold_to_8(v, [](__m256 a, __m256 b) { return _mm256_min_ps(a, b); }),
        [](__m128 a, __m128 b) { return _mm_min_ps(a, b); },
        [](__m128 a, __m128 b) { return _mm_min_ss(a, b); });
}
inline float reduce_max(Floats v) {
    return fold_8(
        fold_to_8(v, [](__m256 a, __m256 b) { return _mm256_max_ps(a, b); }),
        [](__m128 a, __m128 b) { return _mm_max_ps(a, b); },
        [](__m128 a, __m128 b) { return _mm_max_ss(a, b); });
}

}  // namespace
}  // namespace ck::kernels
