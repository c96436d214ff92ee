// Architectures as data: one description per model family, saying what llama.cpp's converter
// class for it does (Hugging Face class names, tensor names, data changes, config keys,
// tokenizer). One engine (hf_reader.cpp, model_keys.cpp, tensor_plan.cpp) reads them, so the
// next family is a table entry and its tests, not a new code path.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer.hpp"

namespace ckplugin::hf {

// Hugging Face's name (model.layers.N. dropped) -> llama.cpp's (blk.N. dropped).
struct NameRule {
    std::string_view hf;
    std::string_view gguf;
};

// How one GGUF key is computed from config.json (see model_keys.cpp for each).
enum class KeyKind {
    u32,                                // the first of `names` present
    f32,                                // the first of `names` present, as f32
    truthy_f32,                         // as f32, only when the value is not null, 0 or false
    rope_theta,                         // the full-attention rope parameters' rope_theta
    rope_theta_swa,                     // the sliding-window layers' rope_theta
    rope_scaling,                       // TextModel's rope scaling keys (linear, yarn, longrope)
    head_dim_lengths,                   // attention.key_length and value_length from head_dim
    file_type,                          // general.file_type
    head_dim_or_split,                  // head_dim, else hidden_size / num_attention_heads
    partial_rotary_dims,                // int(partial_rotary_factor * hidden) / heads (Phi-3)
    original_context_length,            // the rope parameters' original_max_position_embeddings
    causal,                             // attention.causal false when is_causal is false
    sliding_window_unless_every_layer,  // Gemma 3: unless sliding_window_pattern is 1
};

enum class Presence { optional, required, defaulted };

struct KeyRule {
    KeyKind kind;
    std::string_view key;  // after "<arch>."; unused for the kinds that write fixed keys
    std::vector<const char*> names = {};
    Presence presence = Presence::optional;
    double fallback = 0;  // Presence::defaulted: the converter's default
};

// The tensors outside the layers, alike in every family (the reader maps them, the writer maps
// them back).
inline constexpr NameRule model_names[] = {
    {"model.embed_tokens", "token_embd"},
    {"model.norm", "output_norm"},
    {"lm_head", "output"},
};

// Per-expert tensors the converter stacks into one tensor per layer and part.
struct ExpertPart {
    std::string_view hf;    // "w1", "gate_proj"
    std::string_view gguf;  // "ffn_gate_exps"
};
struct ExpertLayout {
    std::string_view container;       // "block_sparse_moe.experts", "mlp.experts"
    std::array<ExpertPart, 3> parts;  // in the order the converter writes them
};

// Tensors the converter computes from config.json and writes before the checkpoint's.
enum class Generated { none, llama3_rope_freqs, longrope_factors };

struct Architecture {
    std::vector<std::string_view> classes;  // config.json's "architectures"[0]
    std::string_view arch;                  // general.architecture
    std::vector<NameRule> layer_names;
    std::vector<KeyRule> keys;  // in the converter's order, general.file_type among them
    TokenizerStyle tokenizer = TokenizerStyle::common;
    bool permute_qk = false;      // q/k rows out of Hugging Face's rotary layout (llama)
    bool norm_plus_one = false;   // Gemma stores w of x * (1 + w): every *norm.weight + 1
    bool trim_embedding = false;  // Gemma 3: token_embd rows beyond the vocabulary dropped
    bool skip_lm_head = false;    // Gemma 2 ignores an lm_head.weight
    std::optional<ExpertLayout> experts;
    Generated generated = Generated::none;
    std::vector<std::string_view> rope_types;  // rope_scaling types the family takes
    std::vector<const char*> must_be_null;     // config keys the converter asserts unset
    // Variants the converter writes differently, recognised by the folder name, config.json's
    // _name_or_path or model_type (lowercase): refused.
    std::vector<std::string_view> refused_variants;
};

// The description for a Hugging Face class, or nullptr.
const Architecture* find_architecture(std::string_view hf_class);
// The description whose general.architecture is `arch`, or nullptr (the hf writer's way in).
const Architecture* find_architecture_by_arch(std::string_view arch);
// The config names ModelBase takes block_count from (find_hparam), for every class alike.
std::vector<const char*> block_count_names();
// "LlamaForCausalLM, ..." for messages.
std::string supported_classes();
// "llama (LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM), qwen2 (...), ..." for
// messages.
std::string supported_architectures();

}  // namespace ckplugin::hf
