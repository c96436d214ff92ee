// Picks a repack table by ISA. Compiled for the baseline ISA: the SIMD tables are only built
// (and so their code only reached) after the CPU check.
#include "ck/kernels/repack.hpp"
#include "repack_simd_tables.hpp"

namespace ck::kernels {

const RepackTable& repack_table(Isa isa) {
    switch (isa) {
        case Isa::avx512: {
            static const RepackTable t = avx512_repack_table();
            return t;
        }
        case Isa::avx2: {
            static const RepackTable t = avx2_repack_table();
            return t;
        }
        default:
            return scalar_repack_table();
    }
}

const RepackTable& select_repack_table(Isa limit) {
    const Isa best = best_supported_isa(cpu_features());
    return repack_table(limit < best ? limit : best);
}

const RepackTable& plugin_repack_table() {
    static const RepackTable& table = select_repack_table(selected_isa());
    return table;
}

const char* plugin_repack_variant() {
    return isa_name(plugin_repack_table().isa).data();
}

}  // namespace ck::kernels
