// The register width of the SIMD unit being compiled. A unit sets CK_SIMD_FLOAT_LANES to 8
// (AVX2) or 16 (AVX-512), is compiled with that ISA's flags (kernels/CMakeLists.txt), and
// includes the shared code written against what this header defines: the AVX2 and AVX-512
// variants are one source, built twice. A NEON unit (ARM64) also defines CK_SIMD_NEON, with 8
// lanes: GCC's generic vectors of 32 bytes, which it compiles to pairs of 128-bit NEON
// instructions; only the code written over generic vectors (quantize_lanes.hpp) is built so.
//
// Everything shared this way has internal linkage (anonymous namespaces): an inline function
// with external linkage compiled for AVX-512 could stand in for the AVX2 unit's copy at link
// time and run on a CPU without AVX-512.
#pragma once

#include "ck/cpu.hpp"

#ifdef CK_SIMD_NEON
#include <arm_neon.h>

#include <cstdint>

#if CK_SIMD_FLOAT_LANES != 8
#error "the NEON units use 8 lanes (two 128-bit registers)"
#endif

namespace ck::kernels {
namespace {

constexpr int float_lanes = CK_SIMD_FLOAT_LANES;
constexpr Isa simd_isa = Isa::neon;

typedef float Floats __attribute__((vector_size(32)));
typedef std::int32_t Ints __attribute__((vector_size(32)));

}  // namespace
}  // namespace ck::kernels
#else
#include <immintrin.h>

// CK_SIMD(name): the intrinsic `name` at the unit's width, _mm512_name or _mm256_name (the
// instructions whose names differ only by that prefix).
#if CK_SIMD_FLOAT_LANES == 16
#define CK_SIMD(name) _mm512_##name
#elif CK_SIMD_FLOAT_LANES == 8
#define CK_SIMD(name) _mm256_##name
#else
#error "define CK_SIMD_FLOAT_LANES as 8 (AVX2) or 16 (AVX-512) before including simd_width.hpp"
#endif

namespace ck::kernels {
namespace {

constexpr int float_lanes = CK_SIMD_FLOAT_LANES;
constexpr Isa simd_isa = float_lanes == 16 ? Isa::avx512 : Isa::avx2;

using Floats = decltype(CK_SIMD(setzero_ps)());          // __m256, __m512
using Ints = decltype(CK_SIMD(cvttps_epi32)(Floats{}));  // __m256i, __m512i
using HalfInts = decltype(CK_SIMD(cvtps_ph)(Floats{}, _MM_FROUND_TO_NEAREST_INT));  // half as wide

}  // namespace
}  // namespace ck::kernels
#endif
