// Picks a kernel table by ISA. Compiled for the baseline ISA: nothing here may execute an
// instruction the CPU lacks, so SIMD tables are only built after the CPU check.
#include "ck/kernels/dequant.hpp"
#include "simd_tables.hpp"
#include "table_choice.hpp"

namespace ck::kernels {
namespace {

// A variant's own kernels over the scalar table (the types it leaves to the scalar reference).
template <DequantTable (*Own)()>
DequantTable merged() {
    const DequantTable own = Own();
    DequantTable t = scalar_dequant_table();
    t.isa = own.isa;
    for (std::size_t i = 0; i < t.fn.size(); ++i)
        if (own.fn[i]) t.fn[i] = own.fn[i];
    return t;
}

}  // namespace

const DequantTable& dequant_table(Isa isa) {
#ifdef CKHOST_ARM_NEON
    return table_for_isa<DequantTable, nullptr, nullptr, scalar_dequant_table,
                         merged<own_kernels<Isa::neon>>>(isa);
#else
    return table_for_isa<DequantTable, merged<own_kernels<Isa::avx512>>,
                         merged<own_kernels<Isa::avx2>>, scalar_dequant_table>(isa);
#endif
}

const DequantTable& select_dequant_table(Isa limit) {
    return best_table(dequant_table, limit);
}

const DequantTable& plugin_dequant_table() {
    return plugin_table<DequantTable, dequant_table>();
}

const char* plugin_dequant_variant() {
    return isa_name(plugin_dequant_table().isa).data();
}

bool has_own_kernel(Isa isa, std::uint32_t type) {
    if (type >= ggml_type_count) return false;
    if (isa == Isa::scalar) return scalar_dequant_table().fn[type] != nullptr;
#ifdef CKHOST_ARM_NEON
    if (isa != Isa::neon) return false;
    constexpr GgmlType neon_types[] = {GgmlType::f16,  GgmlType::bf16,   GgmlType::q8_0,
                                       GgmlType::q4_0, GgmlType::iq4_nl, GgmlType::iq4_xs,
                                       GgmlType::q4_k, GgmlType::q5_k,   GgmlType::q6_k};
    for (GgmlType t : neon_types)
        if (static_cast<std::uint32_t>(t) == type) return true;
    return false;
#elif !defined(CKHOST_X86_SIMD)
    return false;  // no SIMD unit on this target
#endif
    if (isa != Isa::avx2 && isa != Isa::avx512) return false;
    // Answered from this list, not by building the variant's table: that code is compiled for
    // the variant's ISA and must not run on a CPU without it.
    constexpr GgmlType simd_types[] = {GgmlType::f16,  GgmlType::bf16,   GgmlType::q4_0,
                                       GgmlType::q4_1, GgmlType::q5_0,   GgmlType::q5_1,
                                       GgmlType::q8_0, GgmlType::iq4_nl, GgmlType::q4_k,
                                       GgmlType::q5_k, GgmlType::q6_k};
    for (GgmlType t : simd_types)
        if (static_cast<std::uint32_t>(t) == type) return true;
    return false;
}

}  // namespace ck::kernels
