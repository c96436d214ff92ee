// Picks a quantizer by ISA. Compiled for the baseline ISA: the SIMD quantizers are only
// returned once the CPU is known to run them.
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/quantize.hpp"
#include "quantize_simd.hpp"

namespace ck::kernels {

void f16_round_trip(const float* in, std::uint16_t* h, float* back, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        h[i] = f32_to_f16(in[i]);
        back[i] = f16_to_f32(h[i]);
    }
}

namespace {

QuantizeRowFn own_quantizer(Isa isa, std::uint32_t type) {
    const bool avx512 = isa == Isa::avx512;
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::q2_k:
            return avx512 ? quantize_row_q2_K_avx512 : quantize_row_q2_K_avx2;
        case GgmlType::q3_k:
            return avx512 ? quantize_row_q3_K_avx512 : quantize_row_q3_K_avx2;
        case GgmlType::q4_k:
            return avx512 ? quantize_row_q4_K_avx512 : quantize_row_q4_K_avx2;
        case GgmlType::q5_k:
            return avx512 ? quantize_row_q5_K_avx512 : quantize_row_q5_K_avx2;
        case GgmlType::q6_k:
            return avx512 ? quantize_row_q6_K_avx512 : quantize_row_q6_K_avx2;
        case GgmlType::iq4_nl:
            return avx512 ? quantize_row_iq4_nl_avx512 : quantize_row_iq4_nl_avx2;
        default:
            return nullptr;
    }
}

Isa capped(Isa limit) {
    const Isa best = best_supported_isa(cpu_features());
    return limit < best ? limit : best;
}

}  // namespace

bool has_own_quantizer(Isa isa, std::uint32_t type) {
    if (isa == Isa::scalar) return reference_quantizer(type) != nullptr;
    return own_quantizer(isa, type) != nullptr;
}

QuantizeRowFn quantizer(Isa isa, std::uint32_t type) {
    if (isa != Isa::scalar)
        if (const QuantizeRowFn fn = own_quantizer(isa, type)) return fn;
    return reference_quantizer(type);
}

QuantizeRowFn select_quantizer(std::uint32_t type, Isa limit) {
    return quantizer(capped(limit), type);
}

QuantizeRowFn best_quantizer(std::uint32_t type) {
    // Decided once, as plugin_dequant_table(): the host's --isa / CKHOST_ISA, never above the CPU.
    static const Isa isa = capped(selected_isa());
    return quantizer(isa, type);
}

const char* best_quantizer_variant() {
    static const Isa isa = capped(selected_isa());
    return isa_name(isa).data();
}

}  // namespace ck::kernels
