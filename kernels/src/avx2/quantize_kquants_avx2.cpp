// AVX2 quantizers (Q2_K..Q6_K, IQ4_NL): 8 blocks at once, one per lane
// (quantize_kquants_lanes.inc), bit-identical to the scalar reference. Compiled with -mavx2 -mf16c
// but without -mfma: nothing may be fused (and the library adds -ffp-contract=off).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../quantize_simd.hpp"
#include "ck/kernels/quantize.hpp"

namespace ck::kernels {
namespace {

// Like every ISA-specific unit, this one includes no header with inline functions the baseline
// code also uses (float_convert.hpp, <algorithm>): everything it needs is in this anonymous
// namespace or called out of line.
typedef float VF __attribute__((vector_size(32)));
typedef std::int32_t VI __attribute__((vector_size(32)));

// Lane-wise IEEE square root (correctly rounded, as the scalar sqrtss).
inline VF vsqrt(VF v) {
    return reinterpret_cast<VF>(_mm256_sqrt_ps(reinterpret_cast<__m256>(v)));
}

inline VI vmin(VI a, VI b) {
    return reinterpret_cast<VI>(
        _mm256_min_epi32(reinterpret_cast<__m256i>(a), reinterpret_cast<__m256i>(b)));
}

inline VI vmax(VI a, VI b) {
    return reinterpret_cast<VI>(
        _mm256_max_epi32(reinterpret_cast<__m256i>(a), reinterpret_cast<__m256i>(b)));
}

// Lane k = t[i[k]] (i[k] in 0..7).
inline VF permute8(VF t, VI i) {
    return reinterpret_cast<VF>(
        _mm256_permutevar8x32_ps(reinterpret_cast<__m256>(t), reinterpret_cast<__m256i>(i)));
}

#include "../quantize_kquants_lanes.inc"

}  // namespace

void quantize_row_q2_K_avx2(const float* x, std::byte* out, std::size_t n) {
    quantize_rows<q2_k_group, 84>(x, out, n, quantize_row_q2_K);
}

void quantize_row_q3_K_avx2(const float* x, std::byte* out, std::size_t n) {
    quantize_rows<q3_k_group, 110>(x, out, n, quantize_row_q3_K);
}

void quantize_row_q4_K_avx2(const float* x, std::byte* out, std::size_t n) {
    quantize_rows<q4_k_group, 144>(x, out, n, quantize_row_q4_K);
}

void quantize_row_q5_K_avx2(const float* x, std::byte* out, std::size_t n) {
    quantize_rows<q5_k_group, 176>(x, out, n, quantize_row_q5_K);
}

void quantize_row_q6_K_avx2(const float* x, std::byte* out, std::size_t n) {
    quantize_rows<q6_k_group, 210>(x, out, n, quantize_row_q6_K);
}

void quantize_row_iq4_nl_avx2(const float* x, std::byte* out, std::size_t n) {
    quantize_rows<iq4_nl_group, 18, 32>(x, out, n, quantize_row_iq4_nl);
}

}  // namespace ck::kernels
