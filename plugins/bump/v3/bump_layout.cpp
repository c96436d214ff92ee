#include "bump_layout.hpp"

#include <algorithm>
#include <array>

#include "bump_format.hpp"
#include "ck/enum_names.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/model.hpp"

namespace ckplugin::bump {
using namespace ck;
namespace {

constexpr SlotRole layer_roles[slots_per_layer] = {
    SlotRole::ln1_gamma, SlotRole::ln2_gamma, SlotRole::wq, SlotRole::bq, SlotRole::wk,
    SlotRole::bk,        SlotRole::wv,        SlotRole::bv, SlotRole::wo, SlotRole::bo,
    SlotRole::w1,        SlotRole::b1,        SlotRole::w2, SlotRole::b2,
};

// Shape of a slot in ggml order ([row length, rows] or [length]).
std::vector<std::int64_t> slot_shape(SlotRole role, const Geometry& g) {
    const std::int64_t E = g.embed, V = g.vocab, C = g.context, F = g.ffn;
    const std::int64_t q_rows = std::int64_t(g.heads) * g.aligned_head_dim;
    const std::int64_t kv_rows = std::int64_t(g.kv_heads) * g.aligned_head_dim;
    switch (role) {
        case SlotRole::token_emb:
            return {E, V};
        case SlotRole::pos_emb:
            return {E, C};
        case SlotRole::wq:
            return {E, q_rows};
        case SlotRole::bq:
            return {q_rows};
        case SlotRole::wk:
        case SlotRole::wv:
            return {E, kv_rows};
        case SlotRole::bk:
        case SlotRole::bv:
            return {kv_rows};
        case SlotRole::wo:
            return {E, E};
        case SlotRole::w1:
            return {E, 2 * F};
        case SlotRole::b1:
            return {2 * F};
        case SlotRole::w2:
            return {F, E};
        case SlotRole::ln1_gamma:
        case SlotRole::ln2_gamma:
        case SlotRole::bo:
        case SlotRole::b2:
        case SlotRole::final_ln_weight:
        case SlotRole::final_ln_bias:
            return {E};
    }
    return {};
}

// The slot names of bump.md, in SlotRole order.
constexpr std::array<std::string_view, 18> role_names = {"token_emb",
                                                         "pos_emb",
                                                         "ln1_gamma",
                                                         "ln2_gamma",
                                                         "wq",
                                                         "bq",
                                                         "wk",
                                                         "bk",
                                                         "wv",
                                                         "bv",
                                                         "wo",
                                                         "bo",
                                                         "w1",
                                                         "b1",
                                                         "w2",
                                                         "b2",
                                                         "final_ln_weight",
                                                         "final_ln_bias"};

}  // namespace

bool is_weight_role(SlotRole role) noexcept {
    constexpr std::array weights = {SlotRole::token_emb, SlotRole::wq, SlotRole::wk, SlotRole::wv,
                                    SlotRole::wo,        SlotRole::w1, SlotRole::w2};
    return std::find(weights.begin(), weights.end(), role) != weights.end();
}

std::string_view role_name(SlotRole role) noexcept {
    return enum_name(role_names, role, "?");
}

std::string slot_name(SlotRole role, int layer) {
    return layer < 0 ? std::string(role_name(role))
                     : "layer." + std::to_string(layer) + "." + std::string(role_name(role));
}

std::vector<std::pair<SlotRole, int>> slot_roles(std::uint32_t layers) {
    std::vector<std::pair<SlotRole, int>> roles;
    roles.reserve(slot_count(layers));
    roles.emplace_back(SlotRole::token_emb, -1);
    roles.emplace_back(SlotRole::pos_emb, -1);
    for (std::uint32_t i = 0; i < layers; ++i)
        for (SlotRole r : layer_roles) roles.emplace_back(r, static_cast<int>(i));
    roles.emplace_back(SlotRole::final_ln_weight, -1);
    roles.emplace_back(SlotRole::final_ln_bias, -1);
    return roles;
}

std::vector<Slot> layout_slots(const Geometry& g, std::span<const std::uint32_t> ggml_types) {
    auto roles = slot_roles(g.layers);
    if (ggml_types.size() != roles.size())
        throw Error("dtype table has " + std::to_string(ggml_types.size()) + " entries, expected " +
                    std::to_string(roles.size()) + " (14 L + 4)");
    std::vector<Slot> slots;
    slots.reserve(roles.size());
    for (std::size_t i = 0; i < roles.size(); ++i) {
        auto [role, layer] = roles[i];
        Slot s;
        s.role = role;
        s.layer = layer;
        s.name = slot_name(role, layer);
        s.ne = slot_shape(role, g);
        s.ggml_type = ggml_types[i];
        auto bytes = tensor_bytes(s.ggml_type, s.ne);
        if (!bytes)
            throw Error("a " + std::string(type_name(s.ggml_type)) + " slot of shape " +
                            TensorInfo{s.name, s.ggml_type, s.ne}.shape_string() +
                            " cannot be stored (row length not a multiple of the block size, "
                            "or too large)",
                        {}, {}, "slot '" + s.name + "'");
        s.bytes = *bytes;
        slots.push_back(std::move(s));
    }
    return slots;
}

}  // namespace ckplugin::bump
