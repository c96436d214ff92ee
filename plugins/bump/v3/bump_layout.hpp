// The slot plan of a bump v3 payload (bump.md "Slots, in order"), shared by the writer (which
// fills it) and the reader (which finds the slots in a file): names, shapes, dtypes and byte
// sizes, from the model geometry and the dtype of each slot.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "input_model.hpp"

namespace ckplugin::bump {

enum class SlotRole {
    token_emb,
    pos_emb,
    ln1_gamma,
    ln2_gamma,
    wq,
    bq,
    wk,
    bk,
    wv,
    bv,
    wo,
    bo,
    w1,
    b1,
    w2,
    b2,
    final_ln_weight,
    final_ln_bias,
};

// The slots whose dtype may be F32, Q4_K or Q6_K; every other slot is FP32.
bool is_weight_role(SlotRole role) noexcept;
std::string_view role_name(SlotRole role) noexcept;
// "token_emb", "layer.3.wq": the slot's name in bump.md (layer -1 for the slots outside layers).
std::string slot_name(SlotRole role, int layer);

struct Slot {
    std::string name;  // "token_emb", "layer.3.wq", "final_ln_bias"
    SlotRole role;
    int layer = -1;                // -1 for the slots outside the layers
    std::vector<std::int64_t> ne;  // ggml order: ne[0] is the row length
    std::uint32_t ggml_type = 0;
    std::uint64_t bytes = 0;
};

// The roles in payload order: token_emb, pos_emb, 14 per layer, the two final slots.
std::vector<std::pair<SlotRole, int>> slot_roles(std::uint32_t layers);

// Lays out every slot. `ggml_types[i]` is slot i's type (slot_count(layers) entries). Throws
// ck::Error naming the slot when a row cannot be stored in its type (row length not a multiple
// of the block size) or a size overflows.
std::vector<Slot> layout_slots(const Geometry& g, std::span<const std::uint32_t> ggml_types);

}  // namespace ckplugin::bump
