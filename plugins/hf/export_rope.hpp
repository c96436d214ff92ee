// config.json's rope_scaling recovered from a GGUF model: from the rope.scaling.* keys
// (linear, yarn: the inverse of model_keys.cpp's rope scaling block), from the tensors the
// converter generated (Llama 3's rope_freqs, Phi-3's long-context factors: the inverse of
// generated_tensors.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include <nlohmann/json.hpp>

#include "architectures.hpp"
#include "export_config.hpp"
#include "export_keys.hpp"
#include "generated_tensors.hpp"

namespace ckplugin::hf {

// The llama3 rope parameters that give `values` bit for bit through llama3_rope_factors with
// this base and head dimension: factor the largest value (else the smallest), low_freq_factor,
// high_freq_factor and original_max_position_embeddings from a grid with Llama 3.1 and 3.2's
// (1, 4, 8192) first. nullopt when none does.
std::optional<Llama3Rope> recover_llama3_rope(std::span<const float> values, float base,
                                              std::uint32_t dim);

struct RopeExport {
    const ExportKeys& keys;
    const Architecture& architecture;
    // config.json as far as it is made: max_position_embeddings, hidden_size,
    // num_attention_heads, head_dim, original_max_position_embeddings.
    const nlohmann::ordered_json& config;
    const std::optional<GeneratedValues>& generated;
};

// rope_scaling, nullopt for none. Without generated values, a scaling held in generated
// tensors is checked as far as the header allows and given by its type alone. Throws
// ck::key_error / ck::tensor_error naming what config.json cannot hold.
std::optional<nlohmann::ordered_json> export_rope_scaling(const RopeExport& in);

}  // namespace ckplugin::hf
