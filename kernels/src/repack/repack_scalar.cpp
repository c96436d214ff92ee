// The scalar reference of the repack encoders (docs/formats/repack-blocks.md), written as the
// formulas read, and the scalar table built on them. The SIMD variants perform the same f32
// operations in the same order (a true division, multiplies and adds never fused) and must match it
// bit for bit.
#include <cmath>
#include <limits>

#include "ck/kernels/float_convert.hpp"
#include "nf4_thresholds.hpp"
#include "repack_driver.hpp"

namespace ck::kernels {
namespace {

constexpr float infinity = std::numeric_limits<float>::infinity();

// Lane sums of one slice (see reduce_lanes); `nullptr` when nobody wants the figures.
struct SliceSums {
    float error[16] = {};
    float source[16] = {};
    float max_abs_error = 0;

    void add(std::size_t i, float decoded, float source_value) {
        const float e = decoded - source_value;
        error[i % 16] += e * e;
        source[i % 16] += source_value * source_value;
        const float a = std::fabs(e);
        max_abs_error = a > max_abs_error ? a : max_abs_error;  // NaN never wins
    }
    void flush(RepackError& into, std::size_t elements) {
        add_slice_sums(into, reduce_lanes(error), reduce_lanes(source), max_abs_error, elements);
    }
};

// round_half_away(y) for y in [0, 255]: y - trunc(y) is exact, so the half-way test is too
// (y + 0.5 would round up 0.49999997).
std::uint8_t round_code(float y) {
    const float whole = std::trunc(y);
    return static_cast<std::uint8_t>(whole + (y - whole >= 0.5f ? 1.0f : 0.0f));
}

void int8_block(const float* v, std::uint8_t* q, std::uint16_t* min_max, SliceSums* sums) {
    // `a < b ? a : b` is what minps computes: a NaN element never replaces the running value.
    float low = infinity, high = -infinity;
    for (std::size_t i = 0; i < int8_block_elements; ++i) {
        low = v[i] < low ? v[i] : low;
        high = v[i] > high ? v[i] : high;
    }
    // + 0.0f turns -0 into +0: which zero a vector min returns depends on lane order.
    min_max[0] = f32_to_f16(low + 0.0f);
    min_max[1] = f32_to_f16(high + 0.0f);
    const float mn = f16_to_f32(min_max[0]), mx = f16_to_f32(min_max[1]);
    const float range = mx - mn;
    for (std::size_t i = 0; i < int8_block_elements; ++i) {
        std::uint8_t code = 0;
        if (mx > mn) {
            float t = (v[i] - mn) / range;
            t = t > 0.0f ? t : 0.0f;  // NaN -> 0, as maxps(t, 0) gives
            t = t < 1.0f ? t : 1.0f;
            code = round_code(t * 255.0f);
        }
        q[i] = code;
        if (sums) sums->add(i, static_cast<float>(code) / 255.0f * range + mn, v[i]);
    }
}

void nf4_block(const float* v, std::uint8_t* packed, std::uint16_t* absmax, SliceSums* sums) {
    float largest = 0;
    for (std::size_t i = 0; i < nf4_block_elements; ++i) {
        const float a = std::fabs(v[i]);
        largest = a > largest ? a : largest;
    }
    *absmax = f32_to_f16(largest);
    const float scale = f16_to_f32(*absmax);
    for (std::size_t i = 0; i < nf4_block_elements; i += 2) {
        std::uint32_t pair[2];
        for (std::size_t k = 0; k < 2; ++k) {
            pair[k] = scale == 0.0f ? 7 : nf4::index_of(v[i + k] / scale);
            if (sums) sums->add(i + k, nf4_codebook[pair[k]] * scale, v[i + k]);
        }
        packed[i / 2] = static_cast<std::uint8_t>(pair[0] | pair[1] << 4);
    }
}

struct ScalarKernels {
    static const DequantTable& dequant() { return scalar_dequant_table(); }

    static void encode_int8(const float* v, std::size_t blocks, std::uint8_t* q,
                            std::uint16_t* min_max, RepackError& error) {
        SliceSums sums;
        for (std::size_t b = 0; b < blocks; ++b)
            int8_block(v + b * int8_block_elements, q + b * int8_block_elements, min_max + 2 * b,
                       &sums);
        sums.flush(error, blocks * int8_block_elements);
    }

    static void encode_nf4(const float* v, std::size_t blocks, std::uint8_t* packed,
                           std::uint16_t* absmax, RepackError& error) {
        SliceSums sums;
        for (std::size_t b = 0; b < blocks; ++b)
            nf4_block(v + b * nf4_block_elements, packed + b * nf4_block_elements / 2, absmax + b,
                      &sums);
        sums.flush(error, blocks * nf4_block_elements);
    }
};

}  // namespace

void RepackError::add(const RepackError& other) {
    squared_error += other.squared_error;
    squared_source += other.squared_source;
    if (other.max_abs_error > max_abs_error) max_abs_error = other.max_abs_error;
    elements += other.elements;
}

double RepackError::relative_rms() const {
    if (squared_error == 0) return 0;
    return std::sqrt(squared_error / squared_source);
}

void encode_int8_block(const float* values, std::uint8_t* codes, std::uint16_t* min_max) {
    int8_block(values, codes, min_max, nullptr);
}

float decode_int8(std::uint8_t code, std::uint16_t min_bits, std::uint16_t max_bits) {
    const float mn = f16_to_f32(min_bits), mx = f16_to_f32(max_bits);
    return static_cast<float>(code) / 255.0f * (mx - mn) + mn;
}

void encode_nf4_block(const float* values, std::uint8_t* packed, std::uint16_t* absmax) {
    nf4_block(values, packed, absmax, nullptr);
}

float decode_nf4(std::uint8_t index, std::uint16_t absmax_bits) {
    return nf4_codebook[index & 15] * f16_to_f32(absmax_bits);
}

std::uint8_t nf4_nearest(float x) {
    // The literal rule; the kernels use the equivalent thresholds (nf4_thresholds.hpp).
    std::uint8_t best = 0;
    float best_distance = std::fabs(nf4_codebook[0] - x);
    for (std::uint8_t j = 1; j < 16; ++j) {
        const float d = std::fabs(nf4_codebook[j] - x);
        if (d <= best_distance) {
            best = j;
            best_distance = d;
        }
    }
    return best;
}

const RepackTable& scalar_repack_table() {
    static const RepackTable table = build_repack_table<ScalarKernels>(Isa::scalar);
    return table;
}

}  // namespace ck::kernels
