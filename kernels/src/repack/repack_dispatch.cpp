// Picks a repack table by ISA. Compiled for the baseline ISA: the SIMD tables are only built
// (and so their code only reached) after the CPU check.
#include "../table_choice.hpp"
#include "ck/kernels/repack.hpp"
#include "repack_simd_tables.hpp"

namespace ck::kernels {

const RepackTable& repack_table(Isa isa) {
    return table_for_isa<RepackTable, avx512_repack_table, avx2_repack_table, scalar_repack_table>(
        isa);
}

const RepackTable& select_repack_table(Isa limit) {
    return best_table(repack_table, limit);
}

const RepackTable& plugin_repack_table() {
    return plugin_table<RepackTable, repack_table>();
}

const char* plugin_repack_variant() {
    return isa_name(plugin_repack_table().isa).data();
}

}  // namespace ck::kernels
