// The quantizers each SIMD translation unit provides (Q2_K..Q6_K, IQ4_NL; one block per lane,
// bit-identical to the scalar reference). They are compiled with their ISA's flags, so they may
// only be called once the CPU is known to support that ISA (see quantize_dispatch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ck::kernels {

// Baseline code (quantize_dispatch.cpp): h[i] = f32_to_f16(in[i]), back[i] = f16_to_f32(h[i]),
// so the SIMD units round d and dmin with the scalar code's own conversion.
void f16_round_trip(const float* in, std::uint16_t* h, float* back, std::size_t n);

void quantize_row_q2_K_avx2(const float* x, std::byte* out, std::size_t n);
void quantize_row_q3_K_avx2(const float* x, std::byte* out, std::size_t n);
void quantize_row_q4_K_avx2(const float* x, std::byte* out, std::size_t n);
void quantize_row_q5_K_avx2(const float* x, std::byte* out, std::size_t n);
void quantize_row_q6_K_avx2(const float* x, std::byte* out, std::size_t n);
void quantize_row_iq4_nl_avx2(const float* x, std::byte* out, std::size_t n);

void quantize_row_q2_K_avx512(const float* x, std::byte* out, std::size_t n);
void quantize_row_q3_K_avx512(const float* x, std::byte* out, std::size_t n);
void quantize_row_q4_K_avx512(const float* x, std::byte* out, std::size_t n);
void quantize_row_q5_K_avx512(const float* x, std::byte* out, std::size_t n);
void quantize_row_q6_K_avx512(const float* x, std::byte* out, std::size_t n);
void quantize_row_iq4_nl_avx512(const float* x, std::byte* out, std::size_t n);

}  // namespace ck::kernels
