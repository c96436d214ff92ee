// Where the f16 scale fields sit in one block of a quantized type: the tests and benchmarks
// that make random blocks overwrite them with chosen scales (random bits would give NaN and
// subnormal scales far more often than real models do). The fields are the ones
// `ckhost verify --data` checks (ck/kernels/validate.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "ck/ggml_types.hpp"
#include "ck/kernels/validate.hpp"

namespace cktest {

inline std::vector<std::size_t> f16_scale_offsets(ck::GgmlType type) {
    std::vector<std::size_t> offsets;
    for (const ck::kernels::ScaleField& f :
         ck::kernels::scale_fields(static_cast<std::uint32_t>(type)))
        if (f.encoding == ck::kernels::ScaleEncoding::f16) offsets.push_back(f.offset);
    return offsets;  // empty for the float types: every element is a float already
}

}  // namespace cktest
