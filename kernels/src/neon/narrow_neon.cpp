// ARM64 NEON narrowing kernels (f32 -> f16 / bf16), bit-identical to the scalar reference for
// every input, as the AVX variants are (simd_narrow.inc says how):
//
// - f16: FCVTN rounds to nearest even under FPCR's default mode (Linux starts every thread with
//   round-to-nearest and no flush-to-zero), subnormal results and overflow to infinity included,
//   as f32_to_f16 does. Its NaN is the default one, so a vector holding a NaN goes to the scalar
//   reference, which keeps numpy's payload rule in one place.
// - bf16: the same integer round to nearest even as f32_to_bf16, lane by lane; NaN again from
//   the reference.
//
// The halves are stored as NEON holds them, little-endian: the tensor's layout (narrow.hpp).
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "../narrow_simd.hpp"

namespace ck::kernels {
namespace {

// True when a lane of the 8 values holds a NaN.
inline bool has_nan(float32x4_t a, float32x4_t b) {
    const uint32x4_t ordered = vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b));
    return vminvq_u32(ordered) == 0;
}

inline uint16x8_t round_to_f16_bits(float32x4_t a, float32x4_t b) {
    return vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(a), b));
}

// (x + 0x7fff + bit 16 of x) >> 16, then the low halves: no lane overflows, as only NaN bit
// patterns lie above -infinity's 0xff800000.
inline uint16x4_t bf16_bits(float32x4_t v) {
    const uint32x4_t x = vreinterpretq_u32_f32(v);
    const uint32x4_t odd = vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(1));
    return vshrn_n_u32(vaddq_u32(vaddq_u32(x, vdupq_n_u32(0x7fff)), odd), 16);
}

inline uint16x8_t round_to_bf16_bits(float32x4_t a, float32x4_t b) {
    return vcombine_u16(bf16_bits(a), bf16_bits(b));
}

using ReferenceFn = void (*)(const float*, std::uint16_t*, std::size_t);

template <uint16x8_t (*Round)(float32x4_t, float32x4_t), ReferenceFn Reference>
void narrow_lanes(const float* in, std::uint16_t* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float32x4_t a = vld1q_f32(in + i), b = vld1q_f32(in + i + 4);
        // Real weights hold no NaN: the branch is predicted, and costs one compare.
        if (has_nan(a, b)) {
            Reference(in + i, out + i, 8);
            continue;
        }
        vst1q_u16(out + i, Round(a, b));
    }
    Reference(in + i, out + i, n - i);
}

}  // namespace

template <>
NarrowTable own_narrow_kernels<Isa::neon>() {
    return {Isa::neon, narrow_lanes<round_to_f16_bits, scalar_narrow_to_f16>,
            narrow_lanes<round_to_bf16_bits, scalar_narrow_to_bf16>};
}

}  // namespace ck::kernels
