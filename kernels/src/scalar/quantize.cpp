// F32 -> Q8_0 / Q4_0 exactly as ggml's reference quantizers: same scale choice, same rounding,
// so quantizing an F16 model reproduces llama.cpp's output byte for byte.
#include "ck/kernels/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "block_bytes.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/support/little_endian.hpp"

namespace ck::kernels {
namespace {

constexpr std::size_t block = 32;

using scalar::store_half;

// roundf (halves away from zero) to an integer, without the libm call and without branches,
// so the loop vectorises (the libm call made Q8_0 four times slower than Q4_0). Exact for
// |v| < 2^31 (here |v| <= 127.5): the truncation and the fraction v - i are both exact in f32.
inline std::int32_t round_half_away(float v) {
    const auto i = static_cast<std::int32_t>(v);
    const float fraction = v - static_cast<float>(i);
    return i + (fraction >= 0.5f ? 1 : 0) - (fraction <= -0.5f ? 1 : 0);
}

}  // namespace

void quantize_row_q8_0(const float* x, std::byte* out, std::size_t n) {
    for (std::size_t b = 0; b < n / block; ++b, x += block, out += 34) {
        float amax = 0.0f;
        for (std::size_t j = 0; j < block; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_half(out, d);
        // Codes go to a local array first: a store through std::byte* may alias x, which
        // would keep the compiler from vectorising the loop.
        std::int8_t q[block];
        // A block whose largest magnitude is below ~3.7e-37 has a subnormal d, whose inverse
        // overflows: its products are infinite or NaN (0 * inf), which no integer holds. ggml's
        // reference converts them anyway (undefined; 0 on x86, as its cvttss2si gives 0x80000000
        // and the byte kept is 0x00): code 0 here, by a select that still vectorises. Products
        // of any other block stay within +-127.5, untouched.
        for (std::size_t j = 0; j < block; ++j) {
            const float v = x[j] * id;
            q[j] = static_cast<std::int8_t>(round_half_away(std::fabs(v) <= 127.5f ? v : 0.0f));
        }
        std::memcpy(out + 2, q, block);
    }
}

void quantize_row_q4_0(const float* x, std::byte* out, std::size_t n) {
    for (std::size_t b = 0; b < n / block; ++b, x += block, out += 18) {
        // The scale comes from the value of largest magnitude, keeping its sign, so that it
        // maps to -8 exactly.
        float amax = 0.0f, max = 0.0f;
        for (std::size_t j = 0; j < block; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_half(out, d);
        for (std::size_t j = 0; j < block / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[block / 2 + j] * id;
            const int q0 = std::min(15, static_cast<int>(static_cast<std::int8_t>(x0 + 8.5f)));
            const int q1 = std::min(15, static_cast<int>(static_cast<std::int8_t>(x1 + 8.5f)));
            out[2 + j] = static_cast<std::byte>(q0 | (q1 << 4));
        }
    }
}

void quantize_row_f16(const float* x, std::byte* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) store_half(out + 2 * i, x[i]);
}

void quantize_row_bf16(const float* x, std::byte* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        ck::le::store(out + 2 * i, f32_to_bf16(x[i]));
    }
}

QuantizeRowFn reference_quantizer(std::uint32_t type) {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::f16:
            return quantize_row_f16;
        case GgmlType::bf16:
            return quantize_row_bf16;
        case GgmlType::q4_0:
            return quantize_row_q4_0;
        case GgmlType::q4_1:
            return quantize_row_q4_1;
        case GgmlType::q5_0:
            return quantize_row_q5_0;
        case GgmlType::q5_1:
            return quantize_row_q5_1;
        case GgmlType::q8_0:
            return quantize_row_q8_0;
        case GgmlType::q2_k:
            return quantize_row_q2_K;
        case GgmlType::q3_k:
            return quantize_row_q3_K;
        case GgmlType::q4_k:
            return quantize_row_q4_K;
        case GgmlType::q5_k:
            return quantize_row_q5_K;
        case GgmlType::q6_k:
            return quantize_row_q6_K;
        case GgmlType::iq4_nl:
            return quantize_row_iq4_nl;
        case GgmlType::tq1_0:
            return quantize_row_tq1_0;
        case GgmlType::tq2_0:
            return quantize_row_tq2_0;
        default:
            return nullptr;
    }
}

}  // namespace ck::kernels
