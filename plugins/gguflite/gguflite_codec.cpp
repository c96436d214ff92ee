#include "gguflite_codec.hpp"

#include <cmath>
#include <cstring>

#include "ck/kernels/float_convert.hpp"
#include "ck/support/little_endian.hpp"

namespace ckplugin::gguflite {
using namespace ck;

// The AVX2 variant (quantize_avx2.cpp, compiled with its own flags).
namespace avx2 {
std::uint16_t quantize_q8_row(const float* w, std::size_t cols, std::int8_t* q, float* fake);
void quantize_q4_row(const float* w, std::size_t cols, std::uint16_t* scales, std::uint8_t* packed,
                     float* fake);
}  // namespace avx2

namespace {

using kernels::f16_to_f32;
using kernels::f32_to_f16;

constexpr std::size_t lanes = 8;

// round_half_even(clamp(x, lo, hi)), with NaN (a NaN weight, or inf / inf) taken as 0. The
// magic-number addition rounds to nearest even in the default rounding mode and is exact for
// |x| <= 2^22, which the clamp guarantees; unlike nearbyint it vectorises on baseline x86-64.
// Clamping before rounding gives the same result as the spec's rounding before clamping,
// because the bounds are integers.
inline float round_clamped(float x, float lo, float hi) {
    x = x == x ? x : 0.0f;
    x = x < lo ? lo : x;
    x = x > hi ? hi : x;
    return (x + 0x1.8p23f) - 0x1.8p23f;
}

inline std::uint16_t load_u16(const std::byte* p) {
    return ck::le::load<std::uint16_t>(p);
}

template <bool with_fake>
std::uint16_t q8_row(const float* w, std::size_t cols, std::int8_t* q, float* fake) {
    const std::uint16_t s16 = f32_to_f16(absmax(w, cols) / 127.0f);
    const float s = f16_to_f32(s16);
    if (s == 0.0f) {
        std::memset(q, 0, cols);
        if constexpr (with_fake) std::memset(fake, 0, cols * sizeof(float));
        return s16;
    }
    for (std::size_t j = 0; j < cols; ++j) {
        q[j] = static_cast<std::int8_t>(round_clamped(w[j] / s, -127.0f, 127.0f));
        if constexpr (with_fake) fake[j] = static_cast<float>(q[j]) * s;
    }
    return s16;
}

template <bool with_fake>
void q4_row(const float* w, std::size_t cols, std::uint16_t* scales, std::uint8_t* packed,
            float* fake) {
    for (std::size_t g = 0; g < cols / q4_group; ++g) {
        const float* x = w + g * q4_group;
        const std::uint16_t s16 = f32_to_f16(absmax(x, q4_group) / 7.0f);
        const float s = f16_to_f32(s16);
        scales[g] = s16;
        std::int8_t q[q4_group];
        if (s == 0.0f) {
            std::memset(q, 0, sizeof q);
        } else {
            for (std::size_t j = 0; j < q4_group; ++j)
                q[j] = static_cast<std::int8_t>(round_clamped(x[j] / s, -8.0f, 7.0f));
        }
        std::uint8_t* out = packed + g * (q4_group / 2);
        for (std::size_t j = 0; j < q4_group / 2; ++j)
            out[j] = static_cast<std::uint8_t>((q[2 * j] & 0x0f) | ((q[2 * j + 1] & 0x0f) << 4));
        if constexpr (with_fake) {
            float* f = fake + g * q4_group;
            for (std::size_t j = 0; j < q4_group; ++j) f[j] = static_cast<float>(q[j]) * s;
        }
    }
}

std::uint16_t scalar_q8(const float* w, std::size_t cols, std::int8_t* q, float* fake) {
    return fake ? q8_row<true>(w, cols, q, fake) : q8_row<false>(w, cols, q, nullptr);
}

void scalar_q4(const float* w, std::size_t cols, std::uint16_t* scales, std::uint8_t* packed,
               float* fake) {
    if (fake)
        q4_row<true>(w, cols, scales, packed, fake);
    else
        q4_row<false>(w, cols, scales, packed, nullptr);
}

}  // namespace

float absmax(const float* w, std::size_t n) {
    // Independent lanes so the loop vectorises without -ffast-math. `m < v ? v : m` never picks
    // a NaN, so the result does not depend on the order of the comparisons.
    float m[lanes] = {};
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes)
        for (std::size_t k = 0; k < lanes; ++k) {
            const float v = std::fabs(w[i + k]);
            m[k] = m[k] < v ? v : m[k];
        }
    for (; i < n; ++i) {
        const float v = std::fabs(w[i]);
        m[0] = m[0] < v ? v : m[0];
    }
    float result = m[0];
    for (std::size_t k = 1; k < lanes; ++k) result = result < m[k] ? m[k] : result;
    return result;
}

const Quantizers& scalar_quantizers() {
    static const Quantizers table{Isa::scalar, scalar_q8, scalar_q4};
    return table;
}

const Quantizers& select_quantizers(Isa limit) {
#ifdef CKHOST_X86_SIMD
    static const Quantizers avx2_table{Isa::avx2, avx2::quantize_q8_row, avx2::quantize_q4_row};
    const Isa best = best_supported_isa(cpu_features());
    if (limit >= Isa::avx2 && best >= Isa::avx2) return avx2_table;
#else
    (void)limit;  // no AVX2 variant on this target
#endif
    return scalar_quantizers();
}

const Quantizers& quantizers() {
    static const Quantizers& chosen = select_quantizers(selected_isa());
    return chosen;
}

void dequantize_q8_row(const std::byte* scale, const std::byte* values, std::size_t cols,
                       float* out) {
    const float s = f16_to_f32(load_u16(scale));
    const auto* q = reinterpret_cast<const std::int8_t*>(values);
    for (std::size_t j = 0; j < cols; ++j) out[j] = static_cast<float>(q[j]) * s;
}

void dequantize_q4_row(const std::byte* scales, const std::byte* packed, std::size_t cols,
                       float* out) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(packed);
    for (std::size_t g = 0; g < cols / q4_group; ++g) {
        const float s = f16_to_f32(load_u16(scales + 2 * g));
        const std::uint8_t* b = bytes + g * (q4_group / 2);
        // Unpack first, multiply after: two simple loops the compiler vectorises. A nibble is
        // 4-bit two's complement; shifting it to the top of an int8 and back sign-extends it.
        std::int8_t q[q4_group];
        for (std::size_t j = 0; j < q4_group / 2; ++j) {
            q[2 * j] = static_cast<std::int8_t>(static_cast<std::int8_t>(b[j] << 4) >> 4);
            q[2 * j + 1] = static_cast<std::int8_t>(static_cast<std::int8_t>(b[j]) >> 4);
        }
        float* o = out + g * q4_group;
        for (std::size_t j = 0; j < q4_group; ++j) o[j] = static_cast<float>(q[j]) * s;
    }
}

void dequantize_rows(Dtype dtype, const QuantLayout& layout, const std::byte* scales,
                     const std::byte* values, std::uint64_t count, float* out) {
    const std::uint64_t scale_stride = layout.scales_per_row * 2;
    for (std::uint64_t r = 0; r < count; ++r) {
        const std::byte* s = scales + r * scale_stride;
        const std::byte* v = values + r * layout.row_value_bytes;
        float* o = out + r * layout.cols;
        if (dtype == Dtype::q8)
            dequantize_q8_row(s, v, layout.cols, o);
        else
            dequantize_q4_row(s, v, layout.cols, o);
    }
}

}  // namespace ckplugin::gguflite
