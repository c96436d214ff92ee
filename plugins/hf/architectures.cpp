#include "architectures.hpp"

namespace ckplugin::hf {

std::vector<const char*> block_count_names() {
    return {"n_layers", "num_hidden_layers", "n_layer", "num_layers"};
}

namespace {

template <class T>
std::vector<T> join(std::initializer_list<std::vector<T>> parts) {
    std::vector<T> all;
    for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
}

// TextModel.set_gguf_parameters: every key optional, the first config name present wins.
std::vector<KeyRule> text_model_keys() {
    return {
        {KeyKind::u32, "block_count", block_count_names(), Presence::required},
        {KeyKind::u32,
         "context_length",
         {"max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length",
          "model_max_length"}},
        {KeyKind::u32, "embedding_length", {"hidden_size", "n_embd", "dim"}},
        {KeyKind::u32,
         "feed_forward_length",
         {"prefix_dense_intermediate_size", "dense_intermediate_size", "intermediate_size",
          "n_inner", "hidden_dim"}},
        {KeyKind::u32, "attention.head_count", {"num_attention_heads", "n_head", "n_heads"}},
        {KeyKind::u32, "attention.head_count_kv", {"num_key_value_heads", "n_kv_heads"}},
        {KeyKind::causal, "attention.causal"},
        {KeyKind::rope_scaling, ""},
        {KeyKind::rope_theta, "rope.freq_base"},
        {KeyKind::rope_theta_swa, "rope.freq_base_swa"},
        {KeyKind::f32, "attention.layer_norm_rms_epsilon", {"rms_norm_eps", "norm_eps"}},
        {KeyKind::f32,
         "attention.layer_norm_epsilon",
         {"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}},
        {KeyKind::u32, "expert_count", {"num_local_experts", "num_experts", "n_routed_experts"}},
        {KeyKind::u32,
         "expert_used_count",
         {"num_experts_per_tok", "num_experts_per_token", "top_k_experts"}},
        {KeyKind::u32, "expert_group_count", {"n_group"}},
        {KeyKind::u32, "expert_group_used_count", {"topk_group"}},
        {KeyKind::head_dim_lengths, ""},
        {KeyKind::file_type, ""},
    };
}

std::vector<NameRule> attention_names() {
    return {{"input_layernorm", "attn_norm"},
            {"self_attn.q_proj", "attn_q"},
            {"self_attn.k_proj", "attn_k"},
            {"self_attn.v_proj", "attn_v"},
            {"self_attn.o_proj", "attn_output"}};
}
std::vector<NameRule> qk_norm_names() {
    return {{"self_attn.q_norm", "attn_q_norm"}, {"self_attn.k_norm", "attn_k_norm"}};
}
std::vector<NameRule> dense_ffn_names() {
    return {
        {"mlp.gate_proj", "ffn_gate"}, {"mlp.up_proj", "ffn_up"}, {"mlp.down_proj", "ffn_down"}};
}

// LlamaModel: Llama 1-3.x, Mistral (Nemo's explicit head_dim included) and Mixtral's experts.
Architecture llama() {
    Architecture a;
    a.classes = {"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM"};
    a.arch = "llama";
    a.layer_names = join<NameRule>(
        {attention_names(),
         {{"post_attention_layernorm", "ffn_norm"}, {"block_sparse_moe.gate", "ffn_gate_inp"}},
         dense_ffn_names()});
    a.keys = join<KeyRule>({text_model_keys(),
                            {{KeyKind::u32, "vocab_size", {"vocab_size"}, Presence::required},
                             {KeyKind::head_dim_or_split, "rope.dimension_count"}}});
    a.permute_qk = true;
    a.tokenizer = TokenizerStyle::llama;
    a.experts =
        ExpertLayout{"block_sparse_moe.experts",
                     {{{"w1", "ffn_gate_exps"}, {"w2", "ffn_down_exps"}, {"w3", "ffn_up_exps"}}}};
    a.generated = Generated::llama3_rope_freqs;
    a.rope_types = {"default", "linear", "yarn", "su", "longrope", "llama3"};
    return a;
}

Architecture qwen(std::vector<std::string_view> classes, std::string_view arch, bool qk_norm) {
    Architecture a;
    a.classes = std::move(classes);
    a.arch = arch;
    a.layer_names = join<NameRule>({attention_names(),
                                    qk_norm ? qk_norm_names() : std::vector<NameRule>{},
                                    {{"post_attention_layernorm", "ffn_norm"}},
                                    dense_ffn_names()});
    a.keys = text_model_keys();
    a.rope_types = {"default", "linear", "yarn", "su", "longrope"};
    return a;
}

// Qwen3Model; its rerankers get a classifier head made from two rows of lm_head.
Architecture qwen3() {
    Architecture a = qwen({"Qwen3ForCausalLM"}, "qwen3", true);
    a.refused_variants = {"qwen3-reranker", "qwen3-vl-reranker"};
    return a;
}

// Qwen2MoeModel's keys and expert stacking, Qwen3's attention.
Architecture qwen3_moe() {
    Architecture a = qwen({"Qwen3MoeForCausalLM"}, "qwen3moe", true);
    a.layer_names.push_back({"mlp.gate", "ffn_gate_inp"});
    a.tokenizer = TokenizerStyle::gpt2;  // Qwen2MoeModel has no set_vocab of its own
    a.keys.push_back({KeyKind::u32, "expert_feed_forward_length", {"moe_intermediate_size"}});
    a.keys.push_back(
        {KeyKind::u32, "expert_shared_feed_forward_length", {"shared_expert_intermediate_size"}});
    a.experts = ExpertLayout{"mlp.experts",
                             {{{"down_proj", "ffn_down_exps"},
                               {"gate_proj", "ffn_gate_exps"},
                               {"up_proj", "ffn_up_exps"}}}};
    return a;
}

std::vector<NameRule> gemma_names(bool qk_norm) {
    return join<NameRule>({attention_names(),
                           qk_norm ? qk_norm_names() : std::vector<NameRule>{},
                           {{"post_attention_layernorm", "post_attention_norm"},
                            {"pre_feedforward_layernorm", "ffn_norm"},
                            {"post_feedforward_layernorm", "post_ffw_norm"}},
                           dense_ffn_names()});
}

// Gemma2Model writes its own list, every key required.
Architecture gemma2() {
    Architecture a;
    a.classes = {"Gemma2ForCausalLM"};
    a.arch = "gemma2";
    a.layer_names = gemma_names(false);
    const Presence r = Presence::required;
    a.keys = {
        {KeyKind::u32, "context_length", {"max_position_embeddings"}, r},
        {KeyKind::u32, "embedding_length", {"hidden_size"}, r},
        {KeyKind::u32, "block_count", block_count_names(), r},
        {KeyKind::u32, "feed_forward_length", {"intermediate_size"}, r},
        {KeyKind::u32, "attention.head_count", {"num_attention_heads"}, r},
        {KeyKind::u32,
         "attention.head_count_kv",
         {"num_key_value_heads", "num_attention_heads"},
         r},
        {KeyKind::f32, "attention.layer_norm_rms_epsilon", {"rms_norm_eps"}, r},
        {KeyKind::u32, "attention.key_length", {"head_dim"}, r},
        {KeyKind::u32, "attention.value_length", {"head_dim"}, r},
        {KeyKind::file_type, ""},
        {KeyKind::f32, "attn_logit_softcapping", {"attn_logit_softcapping"}, r},
        {KeyKind::f32, "final_logit_softcapping", {"final_logit_softcapping"}, r},
        {KeyKind::u32, "attention.sliding_window", {"sliding_window"}, r},
    };
    a.tokenizer = TokenizerStyle::gemma;
    a.norm_plus_one = true;
    a.skip_lm_head = true;
    a.rope_types = {"default"};
    return a;
}

// Gemma3Model: the text model's list, then its own values with the converter's defaults (a key
// already written keeps its place and takes the new value).
Architecture gemma3() {
    Architecture a;
    a.classes = {"Gemma3ForCausalLM"};
    a.arch = "gemma3";
    a.layer_names = gemma_names(true);
    a.tokenizer = TokenizerStyle::gemma3;
    const Presence d = Presence::defaulted;
    a.keys = join<KeyRule>(
        {text_model_keys(),
         {{KeyKind::u32, "context_length", {"max_position_embeddings"}, d, 131072},
          {KeyKind::u32, "attention.head_count", {"num_attention_heads"}, d, 8},
          {KeyKind::f32, "attention.layer_norm_rms_epsilon", {"rms_norm_eps"}, d, 1e-6},
          {KeyKind::u32, "attention.key_length", {"head_dim"}, d, 256},
          {KeyKind::u32, "attention.value_length", {"head_dim"}, d, 256},
          {KeyKind::rope_theta, "rope.freq_base", {}, d, 1000000.0},
          {KeyKind::truthy_f32, "final_logit_softcapping", {"final_logit_softcapping"}},
          {KeyKind::sliding_window_unless_every_layer, "attention.sliding_window"},
          {KeyKind::u32, "attention.head_count_kv", {"num_key_value_heads"}, d, 4}}});

    a.norm_plus_one = true;
    a.trim_embedding = true;
    a.rope_types = {"default", "linear", "yarn"};
    a.must_be_null = {"attn_logit_softcapping"};  // removed in Gemma 3
    return a;
}

// Phi3MiniModel: fused qkv and gate_up kept fused, its own list, long-context rope factors.
Architecture phi3() {
    Architecture a;
    a.classes = {"Phi3ForCausalLM"};
    a.arch = "phi3";
    a.layer_names = {{"input_layernorm", "attn_norm"},    {"self_attn.qkv_proj", "attn_qkv"},
                     {"self_attn.o_proj", "attn_output"}, {"post_attention_layernorm", "ffn_norm"},
                     {"mlp.gate_up_proj", "ffn_up"},      {"mlp.down_proj", "ffn_down"}};
    const Presence r = Presence::required;
    a.keys = {
        {KeyKind::u32, "context_length", {"n_positions", "max_position_embeddings"}, r},
        {KeyKind::original_context_length, "rope.scaling.original_context_length"},
        {KeyKind::u32, "embedding_length", {"hidden_size", "n_embd"}, r},
        {KeyKind::u32, "feed_forward_length", {"intermediate_size"}, r},
        {KeyKind::u32, "block_count", block_count_names(), r},
        {KeyKind::u32, "attention.head_count", {"num_attention_heads", "n_head"}, r},
        {KeyKind::u32, "attention.head_count_kv", {"num_key_value_heads", "n_head_kv"}, r},
        {KeyKind::f32, "attention.layer_norm_rms_epsilon", {"rms_norm_eps"}, r},
        {KeyKind::partial_rotary_dims, "rope.dimension_count"},
        {KeyKind::rope_theta, "rope.freq_base", {}, r},
        {KeyKind::file_type, ""},
        {KeyKind::u32, "attention.sliding_window", {"sliding_window"}, Presence::defaulted, 0},
    };
    a.tokenizer = TokenizerStyle::phi3;
    a.generated = Generated::longrope_factors;
    a.rope_types = {"default", "su", "longrope", "yarn"};
    return a;
}

const std::vector<Architecture>& architectures() {
    static const std::vector<Architecture> all = {
        llama(),  qwen({"Qwen2ForCausalLM"}, "qwen2", false),
        qwen3(),  qwen3_moe(),
        gemma2(), gemma3(),
        phi3(),
    };
    return all;
}

}  // namespace

const Architecture* find_architecture(std::string_view hf_class) {
    for (const Architecture& a : architectures())
        for (std::string_view c : a.classes)
            if (c == hf_class) return &a;
    return nullptr;
}

const Architecture* find_architecture_by_arch(std::string_view arch) {
    for (const Architecture& a : architectures())
        if (a.arch == arch) return &a;
    return nullptr;
}

std::string supported_architectures() {
    std::string s;
    for (const Architecture& a : architectures()) {
        std::string classes;
        for (std::string_view c : a.classes)
            classes += (classes.empty() ? "" : ", ") + std::string(c);
        s += (s.empty() ? "" : ", ") + std::string(a.arch) + " (" + classes + ")";
    }
    return s;
}

std::string supported_classes() {
    std::string s;
    for (const Architecture& a : architectures())
        for (std::string_view c : a.classes) s += (s.empty() ? "" : ", ") + std::string(c);
    return s;
}

}  // namespace ckplugin::hf
