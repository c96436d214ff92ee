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

// Only reads the units' constant tables: nothing compiled for a SIMD ISA runs here.
QuantizeRowFn own_quantizer(Isa isa, std::uint32_t type) {
#if defined(CKHOST_ARM_NEON)
    if (isa != Isa::neon) return nullptr;
    for (const LaneQuantizer& q : LaneQuantizers<Isa::neon>::entries)
        if (static_cast<std::uint32_t>(q.type) == type) return q.fn;
    return nullptr;
#elif !defined(CKHOST_X86_SIMD)
    (void)isa, (void)type;
    return nullptr;  // no SIMD unit on this target (kernels/CMakeLists.txt)
#else
    if (isa != Isa::avx2 && isa != Isa::avx512) return nullptr;
    const auto& own = isa == Isa::avx512 ? LaneQuantizers<Isa::avx512>::entries
                                         : LaneQuantizers<Isa::avx2>::entries;
    for (const LaneQuantizer& q : own)
        if (static_cast<std::uint32_t>(q.type) == type) return q.fn;
    return nullptr;
#endif
}

Isa capped(Isa limit) {
    return best_isa_within(limit);
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
