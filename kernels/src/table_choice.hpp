// How a kernel table family (dequant, repack) is chosen, once for both: the best ISA this CPU
// runs, capped by a limit; and the plugin-wide choice, capped by the host's --isa and made once.
#pragma once

#include "ck/cpu.hpp"

namespace ck::kernels {

template <class Table>
const Table& best_table(const Table& (*table_for)(Isa), Isa limit) {
    const Isa best = best_supported_isa(cpu_features());
    return table_for(limit < best ? limit : best);
}

// One static per family: the first call decides, later calls (from any thread) reuse it.
template <class Table, const Table& (*TableFor)(Isa)>
const Table& plugin_table() {
    static const Table& table = best_table(TableFor, selected_isa());
    return table;
}

}  // namespace ck::kernels
