// The hf writer's classes as data: for each Hugging Face class a GGUF model can go back to,
// its model_type, its own config names and what transformers needs that a GGUF does not hold.
// The families (architectures.hpp) say how each GGUF key came from config.json; these say which
// config.json the class reads.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ck/model.hpp"

namespace ckplugin::hf {

// What config.json needs per Hugging Face class beyond the family's key rules: the class's
// own names for values the rules take from several config names, and what transformers needs
// to build the model that a GGUF does not hold (docs/formats/hf.md, "Writer: config.json").
struct ExportClass {
    std::string_view hf_class;
    std::string_view model_type;  // as transformers' config class has it
    // The config attributes of the class that GGUF values go back to: for a rule with several
    // config names, the first of its names in this list (feed_forward_length ->
    // intermediate_size, expert_count -> num_local_experts or num_experts).
    std::vector<const char*> config_names;
    // Values the GGUF does not hold, as llama.cpp runs the model; written where the GGUF gave
    // nothing for the key.
    const char* defaults = "{}";
    bool rope_scaling_null = false;    // the family's configs write "rope_scaling": null
    bool integral_rope_theta = false;  // rope_theta as a JSON integer when whole (Qwen3, Gemma 3)
    bool experts = false;              // a mixture-of-experts class: expert_count > 0
    std::string_view name_hint{};      // chosen in its family when general.name says it
    bool attention_bias = false;       // attention_bias: whether attention tensors have biases
    bool mlp_bias = false;             // mlp_bias: whether feed-forward tensors have biases
    bool dense_layer_list = false;     // mlp_only_layers: the layers with a dense feed-forward
    // Gemma: transformers' default head_dim (256) is not llama.cpp's hidden / heads, so it is
    // always written; query_pre_attn_scalar is what llama.cpp scales queries by: head_dim,
    // except hidden / heads for a 27B model, recognised by its layer count (gemma_27b_layers).
    bool gemma = false;
    std::uint32_t gemma_27b_layers = 0;
};

// The description of `hf_class`; ck::key_error naming general.architecture when there is none.
const ExportClass& export_class(std::string_view hf_class, const ck::ModelHeader& header);

}  // namespace ckplugin::hf
