#include "export_classes.hpp"

#include "ck/error.hpp"

namespace ckplugin::hf {
namespace {

std::vector<const char*> text_names(std::initializer_list<const char*> more = {}) {
    std::vector<const char*> names = {"num_hidden_layers",
                                      "max_position_embeddings",
                                      "hidden_size",
                                      "intermediate_size",
                                      "num_attention_heads",
                                      "num_key_value_heads",
                                      "rms_norm_eps",
                                      "vocab_size",
                                      "head_dim",
                                      "rope_theta"};
    names.insert(names.end(), more.begin(), more.end());
    return names;
}

ExportClass llama_class(std::string_view hf_class, std::string_view model_type) {
    ExportClass c{hf_class, model_type, text_names()};
    c.defaults = R"({"hidden_act": "silu"})";
    return c;
}

ExportClass qwen3_class(std::string_view hf_class, std::string_view model_type) {
    ExportClass c{hf_class, model_type, text_names()};
    c.defaults = R"({"hidden_act": "silu", "sliding_window": null, "use_sliding_window": false})";
    c.rope_scaling_null = true;
    c.attention_bias = true;
    return c;
}

ExportClass gemma_class(std::string_view hf_class, std::string_view model_type,
                        std::uint32_t layers_27b) {
    ExportClass c{hf_class, model_type,
                  text_names({"attn_logit_softcapping", "final_logit_softcapping", "sliding_window",
                              "rope_local_base_freq"})};
    c.attention_bias = true;
    c.gemma = true;
    c.gemma_27b_layers = layers_27b;
    return c;
}

std::vector<ExportClass> make_export_classes() {
    ExportClass llama = llama_class("LlamaForCausalLM", "llama");
    llama.rope_scaling_null = llama.attention_bias = llama.mlp_bias = true;
    ExportClass mistral = llama_class("MistralForCausalLM", "mistral");
    // The llama GGUF has no sliding window; llama.cpp attends to every position, and
    // MistralConfig's default window is 4096.
    mistral.defaults = R"({"hidden_act": "silu", "sliding_window": null})";
    mistral.name_hint = "mistral";
    ExportClass mixtral = llama_class("MixtralForCausalLM", "mixtral");
    mixtral.config_names = text_names({"num_local_experts", "num_experts_per_tok"});
    mixtral.defaults = mistral.defaults;
    mixtral.experts = true;
    ExportClass qwen2 = llama_class("Qwen2ForCausalLM", "qwen2");
    qwen2.defaults = R"({"hidden_act": "silu", "use_sliding_window": false})";
    qwen2.rope_scaling_null = true;
    ExportClass qwen3 = qwen3_class("Qwen3ForCausalLM", "qwen3");
    qwen3.integral_rope_theta = true;
    ExportClass qwen3_moe = qwen3_class("Qwen3MoeForCausalLM", "qwen3_moe");
    qwen3_moe.config_names =
        text_names({"num_experts", "num_experts_per_tok", "moe_intermediate_size"});
    // llama.cpp's qwen3moe graph normalizes the chosen experts' weights, and every layer is
    // sparse unless its tensors say otherwise (mlp_only_layers).
    qwen3_moe.defaults = R"({"hidden_act": "silu", "sliding_window": null,
        "use_sliding_window": false, "norm_topk_prob": true, "decoder_sparse_step": 1})";
    qwen3_moe.experts = qwen3_moe.dense_layer_list = true;
    ExportClass gemma2 = gemma_class("Gemma2ForCausalLM", "gemma2", 46);
    // Gemma 2's converter writes no rope.freq_base; llama.cpp's default and Gemma 2's are 10000.
    gemma2.defaults = R"({"hidden_act": "gelu_pytorch_tanh",
        "hidden_activation": "gelu_pytorch_tanh", "rope_theta": 10000.0})";
    ExportClass gemma3 = gemma_class("Gemma3ForCausalLM", "gemma3_text", 62);
    gemma3.defaults = R"({"hidden_activation": "gelu_pytorch_tanh",
        "attn_logit_softcapping": null, "final_logit_softcapping": null})";
    gemma3.rope_scaling_null = gemma3.integral_rope_theta = true;
    ExportClass phi3{"Phi3ForCausalLM", "phi3", text_names({"sliding_window"})};
    phi3.defaults = R"({"hidden_act": "silu"})";
    phi3.rope_scaling_null = phi3.attention_bias = true;
    return {llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma2, gemma3, phi3};
}

const ExportClass* find_export_class(std::string_view hf_class) {
    static const std::vector<ExportClass> all = make_export_classes();
    for (const ExportClass& c : all)
        if (c.hf_class == hf_class) return &c;
    return nullptr;
}

}  // namespace

const ExportClass& export_class(std::string_view hf_class, const ck::ModelHeader& header) {
    const ExportClass* c = find_export_class(hf_class);
    if (!c)
        throw ck::key_error("has no config.json description for class '" + std::string(hf_class) +
                                "' in the hf writer",
                            "general.architecture", header.source);
    return *c;
}

}  // namespace ckplugin::hf
