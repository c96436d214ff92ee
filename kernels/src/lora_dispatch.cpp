// The scalar LoRA product kernel (lora_lanes.inc at the baseline ISA) and the choice of a table
// by ISA. The SIMD tables are only built (and their code reached) after the CPU check.
#define CK_LORA_ISA Isa::scalar

#include "lora_lanes.inc"
#include "table_choice.hpp"

namespace ck::kernels {

const LoraTable& scalar_lora_table() {
    static const LoraTable table = own_lora_kernels<Isa::scalar>();
    return table;
}

const LoraTable& lora_table(Isa isa) {
    return table_for_isa<LoraTable, own_lora_kernels<Isa::avx512>, own_lora_kernels<Isa::avx2>,
                         scalar_lora_table>(isa);
}

const LoraTable& select_lora_table(Isa limit) {
    return best_table(lora_table, limit);
}

const LoraTable& plugin_lora_table() {
    return plugin_table<LoraTable, lora_table>();
}

}  // namespace ck::kernels
