// The slot plan of a bump v3 payload (bump.md "Slots, in order"), shared by the writer (which
// fills it) and the reader (which finds the slots in a file): names, shapes, dtypes and byte
// sizes, from the model geometry and the dtype of each slot.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ckplugin::bump {

struct Geometry {
    std::uint32_t layers = 0;            // L
    std::uint32_t vocab = 0;             // V
    std::uint32_t embed = 0;             // E
    std::uint32_t context = 0;           // C
    std::uint32_t heads = 0;             // H
    std::uint32_t kv_heads = 0;          // Hkv
    std::uint32_t head_dim = 0;          // hd
    std::uint32_t aligned_head_dim = 0;  // hd_a (hd unless headpack ran)
    std::uint32_t ffn = 0;               // F
};

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
