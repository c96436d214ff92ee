// Which weighted quantizer writes a type: each family's file answers for its own types.
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "quantize_weighted_simd.hpp"

namespace ck::kernels {
namespace {

// The SIMD units' tables for `isa` (constant data: nothing compiled for a SIMD ISA runs here).
// Each family adds its line when its units exist.
std::span<const std::span<const WeightedLaneQuantizer>> lane_tables(Isa isa) {
#if defined(CKHOST_ARM_NEON)
    static const std::span<const WeightedLaneQuantizer> neon[] = {
        WeightedKquantLanes<Isa::neon>::entries,
    };
    if (isa == Isa::neon) return neon;
    return {};
#elif !defined(CKHOST_X86_SIMD)
    (void)isa;
    return {};  // no SIMD unit on this target (kernels/CMakeLists.txt)
#else
    static const std::span<const WeightedLaneQuantizer> avx2[] = {
        WeightedKquantLanes<Isa::avx2>::entries,
        WeightedGridLanes<Isa::avx2>::entries,
    };
    static const std::span<const WeightedLaneQuantizer> avx512[] = {
        WeightedKquantLanes<Isa::avx512>::entries,
        WeightedGridLanes<Isa::avx512>::entries,
    };
    if (isa == Isa::avx512) return avx512;
    if (isa == Isa::avx2) return avx2;
    return {};
#endif
}

WeightedQuantizeRowFn own_weighted_quantizer(Isa isa, std::uint32_t type) {
    if (isa == Isa::scalar) return nullptr;
    for (const std::span<const WeightedLaneQuantizer> table : lane_tables(isa))
        for (const WeightedLaneQuantizer& q : table)
            if (static_cast<std::uint32_t>(q.type) == type) return q.fn;
    return nullptr;
}

}  // namespace

bool weighted_blocks_are_independent(std::uint32_t type) {
    const auto t = static_cast<GgmlType>(type);
    return t != GgmlType::q4_0 && t != GgmlType::q4_1 && t != GgmlType::q5_0 && t != GgmlType::q5_1;
}

bool has_own_weighted_quantizer(Isa isa, std::uint32_t type) {
    if (isa == Isa::scalar) return weighted_quantizer(type) != nullptr;
    return own_weighted_quantizer(isa, type) != nullptr;
}

WeightedQuantizeRowFn weighted_quantizer(Isa isa, std::uint32_t type) {
    if (const WeightedQuantizeRowFn fn = own_weighted_quantizer(isa, type)) return fn;
    return weighted_quantizer(type);
}

WeightedQuantizeRowFn best_weighted_quantizer(std::uint32_t type) {
    // Decided once, as best_quantizer(): the host's --isa / CKHOST_ISA, never above the CPU.
    static const Isa isa = [] { return best_isa_within(selected_isa()); }();
    return weighted_quantizer(isa, type);
}

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
