#include "ck/llama/plain_graph.hpp"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "ck/llama/hparams.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/llama/tensors.hpp"

namespace ck::llama {
namespace {

using Features = std::vector<GraphFeature>;

// The tensors whose names contain any of `parts`, in header order.
std::vector<std::string> tensors_with(const ModelHeader& header,
                                      std::initializer_list<std::string_view> parts) {
    std::vector<std::string> names;
    for (const TensorInfo& t : header.tensors)
        if (std::any_of(parts.begin(), parts.end(), [&](std::string_view part) {
                return t.name.find(part) != std::string::npos;
            }))
            names.push_back(t.name);
    return names;
}

void add(Features& out, std::string what, std::vector<std::string> tensors,
         std::vector<std::string> keys = {}) {
    if (!tensors.empty() || !keys.empty())
        out.push_back({std::move(what), std::move(tensors), std::move(keys)});
}

// Stacked experts (Mixtral, Qwen3-MoE), their router and shared experts.
void find_experts(const ModelHeader& header, const Hyperparameters& hp, Features& out) {
    std::vector<std::string> keys;
    std::string what = "a mixture-of-experts feed-forward";
    if (hp.expert_count) {
        keys.push_back(hp.key("expert_count"));
        what += " (" + std::to_string(hp.expert_count) + " experts";
        if (hp.expert_used_count)
            what += ", " + std::to_string(hp.expert_used_count) + " per token";
        what += ")";
    }
    add(out, what, tensors_with(header, {"_exps.", "ffn_gate_inp.", "_shexp."}), keys);
}

// Phi-3's gate and up in one ffn_up tensor: twice the feed-forward length of rows, and no
// ffn_gate in that layer. (A layer missing ffn_gate otherwise is a missing tensor, which the
// consumer names as such.)
void find_fused_gate_up(const ModelHeader& header, const Hyperparameters& hp, Features& out) {
    if (!hp.feed_forward_length) return;
    const std::int64_t twice = 2 * std::int64_t{hp.feed_forward_length->first()};
    std::vector<std::string> fused;
    for (const TensorInfo& t : header.tensors) {
        constexpr std::string_view up = ".ffn_up.weight";
        if (!t.name.starts_with("blk.") || !t.name.ends_with(up)) continue;
        const std::string gate = t.name.substr(0, t.name.size() - up.size()) + ".ffn_gate.weight";
        if (t.ne.size() == 2 && t.ne[1] == twice && !header.find_tensor(gate))
            fused.push_back(t.name);
    }
    add(out, "the feed-forward's gate and up projections fused in one ffn_up tensor", fused);
}

// Heads as wide as key_length / value_length say, when that is not E / H.
void find_head_size(const ModelHeader& header, const Hyperparameters& hp, Features& out) {
    const TensorInfo* embd = header.find_tensor(token_embd_name);
    std::uint32_t embed = hp.embedding_length.value_or(0);
    if (!hp.embedding_length && embd && !embd->ne.empty())
        embed = static_cast<std::uint32_t>(embd->ne[0]);
    if (!hp.head_count || hp.head_count->first() == 0 || embed == 0) return;
    const std::uint32_t heads = hp.head_count->first(), plain = embed / heads;
    const std::uint32_t key = hp.key_length.value_or(plain),
                        value = hp.value_length.value_or(plain);
    if (key == plain && value == plain) return;
    const std::string sizes = key == value ? "attention heads " + std::to_string(key) + " wide"
                                           : "query and key heads " + std::to_string(key) +
                                                 " wide, value heads " + std::to_string(value);
    std::vector<std::string> keys;
    if (key != plain) keys.push_back(hp.key("attention.key_length"));
    if (value != plain) keys.push_back(hp.key("attention.value_length"));
    add(out,
        sizes + " where the plain graph's are embedding_length / head_count = " +
            std::to_string(embed) + " / " + std::to_string(heads) + " = " + std::to_string(plain),
        {}, keys);
}

// Keys that change attention: soft-capping, and a sliding window shorter than the context.
void find_attention_keys(const Hyperparameters& hp, const ArchKeys& keys, Features& out) {
    std::vector<std::string> capping;
    for (const char* suffix : {"attn_logit_softcapping", "final_logit_softcapping"})
        if (const auto v = keys.number(suffix); v && v->value != 0)
            capping.push_back(keys.key(suffix));
    add(out, "logit soft-capping", {}, capping);
    const std::optional<std::uint32_t> window = keys.u32("attention.sliding_window");
    if (!window || *window == 0 || (hp.context_length && *window >= *hp.context_length)) return;
    std::vector<std::string> swa = {keys.key("attention.sliding_window")};
    if (keys.find("rope.freq_base_swa")) swa.push_back(keys.key("rope.freq_base_swa"));
    add(out, "sliding-window attention (a window of " + std::to_string(*window) + " tokens)", {},
        swa);
}

void find_rope_scaling(const ModelHeader& header, const ArchKeys& keys, Features& out) {
    const std::string runtime =
        ", which a runtime computing RoPE from rope_theta alone cannot apply";
    std::vector<std::string> factors;
    for (const std::string_view name : rope_factor_tensor_names)
        if (header.find_tensor(name)) factors.emplace_back(name);
    add(out,
        "per-frequency RoPE factors (Llama 3.1's rope_type llama3, Phi-3's longrope)" + runtime,
        factors);
    if (const auto scaling = rope_scaling(keys))
        add(out,
            "RoPE scaling (" + scaling->type + ", factor " +
                Value::of_f64(scaling->factor.value).to_display() + ")" + runtime,
            {}, {scaling->factor_key});
}

// "a, b, c and 4 more": the first few names, with the values of keys.
std::string evidence(const ModelHeader& header, const GraphFeature& f) {
    std::vector<std::string> shown = f.tensors;
    for (const std::string& key : f.keys) {
        const Value* v = header.metadata.find(key);
        shown.push_back(v ? key + " = " + v->to_display() : key);
    }
    constexpr std::size_t most = 3;
    std::string text;
    for (std::size_t i = 0; i < std::min(most, shown.size()); ++i)
        text += (i ? ", " : "") + shown[i];
    if (shown.size() > most) text += " and " + std::to_string(shown.size() - most) + " more";
    return text;
}

std::vector<GraphFeature> features_beyond(const ModelHeader& header, const Hyperparameters& hp) {
    const ArchKeys keys(header.metadata);
    Features out;
    find_experts(header, hp, out);
    add(out, "query, key and value projections fused in one attn_qkv tensor",
        tensors_with(header, {"attn_qkv."}));
    find_fused_gate_up(header, hp, out);
    add(out, "per-head RMSNorms of queries and keys",
        tensors_with(header, {"attn_q_norm.", "attn_k_norm."}));
    add(out, "RMSNorms after attention and after the feed-forward",
        tensors_with(header, {"post_attention_norm.", "post_ffw_norm."}));
    find_head_size(header, hp, out);
    find_attention_keys(hp, keys, out);
    if (hp.arch.starts_with("gemma"))
        add(out, "Gemma's GELU feed-forward and embeddings scaled by sqrt(embedding_length)", {},
            {"general.architecture"});
    find_rope_scaling(header, keys, out);
    return out;
}

}  // namespace

std::vector<GraphFeature> beyond_plain_graph(const ModelHeader& header) {
    return features_beyond(header, read_hyperparameters(header.metadata, header.source));
}

void refuse_beyond_plain_graph(const ModelHeader& header, const std::string& consumer) {
    const Hyperparameters hp = read_hyperparameters(header.metadata, header.source);
    const std::vector<GraphFeature> features = features_beyond(header, hp);
    if (features.empty()) return;
    std::string list;
    for (const GraphFeature& f : features)
        list += (list.empty() ? "" : "; ") + f.what + ": " + evidence(header, f);
    const std::string message = consumer + " cannot represent this model (architecture " + hp.arch +
                                "): C-Kernel-Engine's llama graph has no place for " + list +
                                "; the model would run differently, so nothing was written";
    const GraphFeature& first = features.front();
    if (!first.tensors.empty()) throw tensor_error(message, first.tensors.front(), header.source);
    throw key_error(message, first.keys.front(), header.source);
}

}  // namespace ck::llama
