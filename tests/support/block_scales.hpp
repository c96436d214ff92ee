// Where the f16 scale fields sit in one block of the quantized types that have SIMD kernels:
// the tests and benchmarks that make random blocks overwrite them with chosen scales (random
// bits would give NaN and subnormal scales far more often than real models do).
#pragma once

#include <cstddef>
#include <vector>

#include "ck/ggml_types.hpp"

namespace cktest {

inline std::vector<std::size_t> f16_scale_offsets(ck::GgmlType type) {
    switch (type) {
        case ck::GgmlType::q4_0:
        case ck::GgmlType::q5_0:
        case ck::GgmlType::q8_0:
        case ck::GgmlType::iq4_nl:
            return {0};  // d
        case ck::GgmlType::q4_1:
        case ck::GgmlType::q5_1:
        case ck::GgmlType::q4_k:
        case ck::GgmlType::q5_k:
            return {0, 2};  // d, m (dmin for the k-quants)
        case ck::GgmlType::q6_k:
            return {208};  // d, after ql, qh and the scales
        default:
            return {};  // float types: every element is a float already
    }
}

}  // namespace cktest
