// How a kernel table family (dequant, repack) is chosen, once for both: the table of each ISA,
// built once; the best ISA this CPU runs, capped by a limit; and the plugin-wide choice, capped
// by the host's --isa and made once.
#pragma once

#include "ck/cpu.hpp"

namespace ck::kernels {

// The table of `isa`, each built on first use by its builder. The SIMD builders run code compiled
// for their ISA, so asking for an ISA the CPU lacks is the caller's mistake (best_table never
// does).
// BuildNeon, when given, builds ARM64's table (NEON is part of every ARM64 CPU).
template <class Table, Table (*BuildAvx512)(), Table (*BuildAvx2)(), const Table& (*Scalar)(),
          Table (*BuildNeon)() = nullptr>
const Table& table_for_isa(Isa isa) {
#if defined(CKHOST_ARM_NEON)
    if constexpr (BuildNeon != nullptr) {
        if (isa == Isa::neon) {
            static const Table t = BuildNeon();
            return t;
        }
    }
    return Scalar();
#elif !defined(CKHOST_X86_SIMD)
    // No SIMD variant is built for this target (kernels/CMakeLists.txt), and no CPU of it
    // reports an x86 ISA: the scalar table.
    (void)isa;
    return Scalar();
#else
    switch (isa) {
        case Isa::avx512: {
            static const Table t = BuildAvx512();
            return t;
        }
        case Isa::avx2: {
            static const Table t = BuildAvx2();
            return t;
        }
        default:
            return Scalar();
    }
#endif
}

template <class Table>
const Table& best_table(const Table& (*table_for)(Isa), Isa limit) {
    return table_for(best_isa_within(limit));
}

// One static per family: the first call decides, later calls (from any thread) reuse it.
template <class Table, const Table& (*TableFor)(Isa)>
const Table& plugin_table() {
    static const Table& table = best_table(TableFor, selected_isa());
    return table;
}

}  // namespace ck::kernels
