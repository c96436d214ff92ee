// Which weighted quantizer writes a type: each family's file answers for its own types.
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"

namespace ck::kernels {

WeightedQuantizeRowFn weighted_quantizer(std::uint32_t type) {
    if (WeightedQuantizeRowFn fn = scalar::weighted_kquant_or_legacy(type)) return fn;
    if (WeightedQuantizeRowFn fn = scalar::weighted_iq1_iq2(type)) return fn;
    return scalar::weighted_iq3_iq4(type);
}

bool quantizer_requires_weights(std::uint32_t type) {
    const auto t = static_cast<GgmlType>(type);
    return t == GgmlType::iq2_xxs || t == GgmlType::iq2_xs || t == GgmlType::iq1_s;
}

}  // namespace ck::kernels
