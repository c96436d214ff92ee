#include "export_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "ck/error.hpp"
#include "ck/llama/llama_keys.hpp"
#include "export_classes.hpp"
#include "export_keys.hpp"
#include "export_rope.hpp"
#include "post_processor.hpp"
#include "special_vocab.hpp"

using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

std::string lowercase(std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

std::string joined(const std::vector<std::string_view>& names) {
    std::string s;
    for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
}

// A family with several classes (llama): the one with experts when the model has them, else
// the one whose name hint general.name or general.basename holds, else the plain first one.
std::string default_class(const Architecture& a, const ExportKeys& keys) {
    const bool experts = keys.count(keys.key("expert_count")).value_or(0) > 0;
    std::string names;
    for (const char* key : {"general.name", "general.basename"})
        names += lowercase(keys.text(key).value_or("")) + " ";
    for (std::string_view c : a.classes) {
        const ExportClass& e = export_class(c, keys.header());
        if (experts ? e.experts : !e.name_hint.empty() && names.find(e.name_hint) != names.npos)
            return std::string(c);
    }
    for (std::string_view c : a.classes)
        if (!export_class(c, keys.header()).experts) return std::string(c);
    return std::string(a.classes.front());
}

void check_experts(const ExportClass& c, const ExportKeys& keys) {
    const std::string key = keys.key("expert_count");
    const std::uint32_t experts = keys.count(key).value_or(0);
    if (c.experts && experts == 0)
        keys.fail(key, "is " + std::string(keys.find(key) ? "0" : "missing") + ", but " +
                           std::string(c.hf_class) + " is a mixture of experts");
    if (!c.experts && experts > 0)
        keys.fail(key, "is " + std::to_string(experts) + ", but " + std::string(c.hf_class) +
                           " has no experts");
}

// config.json made from the GGUF: each value remembers the key (or tensor) it came from, so
// that two that disagree are refused naming both.
class ConfigBuilder {
  public:
    ConfigBuilder(const ExportKeys& keys, const ExportClass& c) : keys_(keys), class_(c) {}

    void add_shape_values();
    void add_rule(const KeyRule& rule);
    void add_token_ids();
    void add_class_values();
    void set(const std::string& name, const ordered_json& value, const std::string& from);
    std::optional<std::uint32_t> count(const char* name) const;

    ordered_json config = ordered_json::object();

  private:
    const char* config_name(const KeyRule& rule) const;
    bool has_name(std::string_view name) const;
    std::uint32_t head_split(const std::string& asking) const;
    void value_rule(const KeyRule& rule, const std::string& key);
    void theta(const KeyRule& rule, const std::string& key, const char* name);
    void head_dim_lengths();
    void whole_head_rotation(const std::string& key);
    void partial_rotation(const std::string& key);
    void sliding_window_pattern(const std::string& key);

    const ExportKeys& keys_;
    const ExportClass& class_;
    std::map<std::string, std::string> source_;  // config name -> where its value came from
};

void ConfigBuilder::set(const std::string& name, const ordered_json& value,
                        const std::string& from) {
    const auto known = source_.find(name);
    if (known != source_.end() && config[name] != value)
        keys_.fail(from, "gives config.json's " + name + " " + value.dump() + ", but " +
                             known->second + " gave " + config[name].dump());
    if (known == source_.end()) source_[name] = from;
    config[name] = value;
}

std::optional<std::uint32_t> ConfigBuilder::count(const char* name) const {
    const auto v = config.find(name);
    if (v == config.end() || !v->is_number_unsigned()) return std::nullopt;
    return v->get<std::uint32_t>();
}

bool ConfigBuilder::has_name(std::string_view name) const {
    const auto& names = class_.config_names;
    return std::find(names.begin(), names.end(), name) != names.end();
}

// The rule's config name this class uses: the first of its names the class has.
const char* ConfigBuilder::config_name(const KeyRule& rule) const {
    for (const char* n : rule.names)
        if (has_name(n)) return n;
    return nullptr;
}

// hidden_size / num_attention_heads, which llama.cpp takes as the head size when the GGUF
// states none.
std::uint32_t ConfigBuilder::head_split(const std::string& asking) const {
    const auto hidden = count("hidden_size");
    const auto heads = count("num_attention_heads");
    if (!heads || *heads == 0)
        keys_.fail(keys_.key("attention.head_count"),
                   "is missing or 0, and " + asking + " needs the head size");
    if (!hidden)
        keys_.fail(keys_.key("embedding_length"), "is missing, and " + asking + " needs it");
    return *hidden / *heads;
}

// token_embd's rows are the vocabulary; no output matrix means tied embeddings.
void ConfigBuilder::add_shape_values() {
    const ck::ModelHeader& header = keys_.header();
    const ck::TensorInfo* embd = header.find_tensor(ck::llama::token_embd_name);
    if (!embd || embd->ne.size() != 2 || embd->ne[1] < 0)
        throw ck::tensor_error(embd ? "is not a [hidden, vocabulary] matrix"
                                    : "is missing: config.json's vocab_size is its rows",
                               ck::llama::token_embd_name, header.source);
    set("vocab_size", static_cast<std::uint64_t>(embd->ne[1]), "token_embd.weight's rows");
    config["tie_word_embeddings"] = header.find_tensor("output.weight") == nullptr;
    const auto any_tensor = [&header](std::initializer_list<const char*> parts) {
        return std::any_of(header.tensors.begin(), header.tensors.end(), [&](const auto& t) {
            return t.name.starts_with("blk.") &&
                   std::any_of(parts.begin(), parts.end(),
                               [&](const char* p) { return t.name.ends_with(p); });
        });
    };
    if (class_.attention_bias)
        config["attention_bias"] = any_tensor({".attn_q.bias", ".attn_k.bias", ".attn_v.bias",
                                               ".attn_output.bias", ".attn_qkv.bias"});
    if (class_.mlp_bias)
        config["mlp_bias"] = any_tensor({".ffn_gate.bias", ".ffn_up.bias", ".ffn_down.bias"});
    if (!class_.dense_layer_list) return;
    std::set<std::uint64_t> dense;
    for (const ck::TensorInfo& t : header.tensors) {
        const std::size_t dot = t.name.find('.', 4);
        if (!t.name.starts_with("blk.") || dot == std::string::npos || dot == 4 || dot > 13 ||
            t.name.substr(dot) != ".ffn_up.weight")
            continue;
        const std::string layer = t.name.substr(4, dot - 4);
        if (std::all_of(layer.begin(), layer.end(), [](char c) { return c >= '0' && c <= '9'; }))
            dense.insert(std::stoull(layer));
    }
    config["mlp_only_layers"] = std::vector<std::uint64_t>(dense.begin(), dense.end());
}

// A rule naming config values: the value goes back to the class's name for it.
void ConfigBuilder::value_rule(const KeyRule& rule, const std::string& key) {
    std::optional<ordered_json> value;
    if (rule.kind == KeyKind::u32) {
        if (const auto n = keys_.count(key)) value = *n;
    } else if (const auto f = keys_.f32(key)) {
        // truthy_f32: the converter writes nothing for 0, which config.json says with null.
        value = rule.kind == KeyKind::truthy_f32 && *f == 0 ? ordered_json() : json_f32(*f);
    }
    const char* name = config_name(rule);
    if (!value) {
        if (rule.presence == Presence::required && !(name && config.contains(name)))
            keys_.fail(key, std::string("is missing, and llama.cpp's converter requires ") +
                                "config.json's " + rule.names.front());
        return;
    }
    if (!name && *value == 0) return;  // a count of 0 of what the class has not says nothing
    if (!name)
        keys_.fail(key, "has no config.json key in " + std::string(class_.hf_class) +
                            " (the converter reads it from " + rule.names.front() + ")");
    // A default of 0 is the converter's reading of null (Phi-3's sliding_window).
    if (rule.presence == Presence::defaulted && rule.fallback == 0 && *value == 0)
        value = ordered_json();
    set(name, *value, key);
}

void ConfigBuilder::theta(const KeyRule& rule, const std::string& key, const char* name) {
    const std::optional<float> f = keys_.f32(key);
    if (!f) {
        if (rule.presence == Presence::required)
            keys_.fail(key, "is missing, and llama.cpp's converter requires rope_theta");
        return;
    }
    if (!has_name(name))
        keys_.fail(key, "has no config.json key in " + std::string(class_.hf_class));
    set(name, json_f32(*f, class_.integral_rope_theta), key);
}

// One head_dim for queries, keys and values; a length the GGUF leaves out is llama.cpp's
// hidden / heads.
void ConfigBuilder::head_dim_lengths() {
    const std::string k_key = keys_.key("attention.key_length");
    const std::string v_key = keys_.key("attention.value_length");
    const auto k = keys_.count(k_key), v = keys_.count(v_key);
    if (!k && !v) return;
    const std::uint32_t key_length = k ? *k : head_split(k_key);
    const std::uint32_t value_length = v ? *v : head_split(v_key);
    if (key_length != value_length)
        keys_.fail(v_key, "is " + std::to_string(value_length) + " but key_length is " +
                              std::to_string(key_length) + ": " + std::string(class_.hf_class) +
                              " has one head_dim for both");
    set("head_dim", key_length, k ? k_key : v_key);
}

// LlamaModel's rope.dimension_count is the whole head: anything else is a partial rotation
// the class cannot express.
void ConfigBuilder::whole_head_rotation(const std::string& key) {
    const auto dims = keys_.count(key);
    if (!dims) return;
    const auto head_dim = count("head_dim");
    const std::uint32_t head = head_dim ? *head_dim : head_split(key);
    if (*dims != head)
        keys_.fail(key, "is " + std::to_string(*dims) + ", but heads are " + std::to_string(head) +
                            " wide: " + std::string(class_.hf_class) + " rotates whole heads");
}

// Phi-3: rope.dimension_count = int(partial_rotary_factor * hidden) // heads; the factor is
// written when it is not 1, the shortest that gives the dimensions back both that way and as
// transformers takes it (int(hidden // heads * factor)).
void ConfigBuilder::partial_rotation(const std::string& key) {
    const auto dims = keys_.count(key);
    if (!dims || *dims == head_split(key)) return;
    const std::uint32_t hidden = *count("hidden_size"), heads = *count("num_attention_heads");
    double factor = static_cast<double>(*dims) * heads / hidden;
    for (int step = 0; step < 4; ++step, factor = std::nextafter(factor, 2.0))
        if (static_cast<std::int64_t>(factor * hidden) / heads == *dims &&
            static_cast<std::int64_t>((hidden / heads) * factor) == *dims)
            return set("partial_rotary_factor", factor, key);
    keys_.fail(key, "is " + std::to_string(*dims) + ", which no partial_rotary_factor gives for " +
                        std::to_string(heads) + " heads of a hidden size of " +
                        std::to_string(hidden));
}

// Gemma 3: llama.cpp makes every sixth layer global when the GGUF has a window (Gemma 3's own
// pattern) and every layer global without one, which sliding_window_pattern 1 says.
void ConfigBuilder::sliding_window_pattern(const std::string& key) {
    const auto window = keys_.count(key);
    if (!window || *window == 0) return set("sliding_window_pattern", 1u, key);
    set("sliding_window", *window, key);
    const std::string pattern_key = keys_.key("attention.sliding_window_pattern");
    set("sliding_window_pattern", keys_.count(pattern_key).value_or(6), pattern_key);
}

void ConfigBuilder::add_rule(const KeyRule& rule) {
    const std::string key = keys_.key(rule.key);
    switch (rule.kind) {
        case KeyKind::u32:
        case KeyKind::f32:
        case KeyKind::truthy_f32:
            return value_rule(rule, key);
        case KeyKind::rope_theta:
            return theta(rule, key, "rope_theta");
        case KeyKind::rope_theta_swa:
            return theta(rule, key, "rope_local_base_freq");
        case KeyKind::rope_scaling:  // export_rope_scaling, after every rule
        case KeyKind::file_type:     // torch_dtype
            return;
        case KeyKind::head_dim_lengths:
            return head_dim_lengths();
        case KeyKind::head_dim_or_split:
            return whole_head_rotation(key);
        case KeyKind::partial_rotary_dims:
            return partial_rotation(key);
        case KeyKind::original_context_length: {
            const auto n = keys_.count(key);
            if (!n) keys_.fail(key, "is missing, and llama.cpp's converter requires it");
            return set("original_max_position_embeddings", *n, key);
        }
        case KeyKind::causal:
            if (keys_.flag(key).value_or(true)) return;
            keys_.fail(key, "is false, but " + std::string(class_.hf_class) +
                                " is a causal language model");
        case KeyKind::sliding_window_unless_every_layer:
            return sliding_window_pattern(key);
    }
}

// The special token types whose <type>_token_id the converter reads from config.json, for any
// it did not find in the tokenizer files; GenerationConfig keeps bos, eos and pad too.
bool config_token_type(std::string_view type) {
    const std::vector<std::string> read = SpecialVocabState().types;
    return std::find(read.begin(), read.end(), type) != read.end();
}
bool generation_token_type(std::string_view type) {
    return type == "bos" || type == "eos" || type == "pad";
}

// bos, eos and pad are written as null when absent: the classes' defaults (Phi-3's pad 32000,
// Gemma's 0, 1, 2) would otherwise invent ids.
void ConfigBuilder::add_token_ids() {
    for (const SpecialType& t : special_types) {
        if (!config_token_type(t.type)) continue;
        const std::string name = std::string(t.type) + "_token_id";
        const auto id = keys_.count(t.id_key);
        if (id) set(name, *id, t.id_key);
        if (!id && generation_token_type(t.type)) config[name] = nullptr;
    }
}

// What the class needs that the rules gave nothing for.
void ConfigBuilder::add_class_values() {
    // A family whose rules skip rope.freq_base (Gemma 2) still runs with it in llama.cpp.
    if (!config.contains("rope_theta"))
        if (const auto theta = keys_.f32(keys_.key("rope.freq_base")))
            set("rope_theta", json_f32(*theta, class_.integral_rope_theta),
                keys_.key("rope.freq_base"));
    if (class_.gemma) {
        if (!config.contains("head_dim")) set("head_dim", head_split("head_dim"), "hidden / heads");
        const bool is_27b = count("num_hidden_layers") == class_.gemma_27b_layers;
        config["query_pre_attn_scalar"] =
            is_27b ? head_split("query_pre_attn_scalar") : *count("head_dim");
    }
    const ordered_json defaults = ordered_json::parse(class_.defaults);
    for (auto it = defaults.begin(); it != defaults.end(); ++it)
        if (!config.contains(it.key())) config[it.key()] = it.value();
}

}  // namespace

ExportTarget choose_export_target(const ck::ModelHeader& header, std::string_view requested_class) {
    const ExportKeys general(header, "general");
    const std::string arch_key = "general.architecture";
    const std::optional<std::string> arch = general.text(arch_key);
    if (!arch) general.fail(arch_key, "is missing: the model's family is unknown");
    const Architecture* a = find_architecture_by_arch(*arch);
    if (!a)
        general.fail(arch_key, "is '" + *arch +
                                   "', which the hf writer does not know (it writes: " +
                                   supported_architectures() + ")");
    const ExportKeys keys(header, a->arch);
    if (!requested_class.empty() &&
        std::find(a->classes.begin(), a->classes.end(), requested_class) == a->classes.end())
        general.fail(arch_key, "is '" + *arch + "', whose models become " + joined(a->classes) +
                                   ", not the class '" + std::string(requested_class) +
                                   "' asked for");
    const std::string hf_class =
        requested_class.empty() ? default_class(*a, keys) : std::string(requested_class);
    const ExportClass& c = export_class(hf_class, header);
    check_experts(c, keys);
    return {a, hf_class, std::string(c.model_type)};
}

ordered_json export_config(const ck::ModelHeader& header, const ExportTarget& target,
                           std::string_view torch_dtype,
                           const std::optional<GeneratedValues>& generated) {
    if (torch_dtype != "bfloat16" && torch_dtype != "float16" && torch_dtype != "float32")
        throw ck::usage_error("torch_dtype '" + std::string(torch_dtype) +
                              "' is not bfloat16, float16 or float32");
    const Architecture& a = *target.architecture;
    const ExportKeys keys(header, a.arch);
    ConfigBuilder b(keys, export_class(target.hf_class, header));
    b.config["architectures"] = {target.hf_class};
    b.config["model_type"] = target.model_type;
    b.add_shape_values();
    for (const KeyRule& rule : a.keys) b.add_rule(rule);
    const auto scaling = export_rope_scaling({keys, a, b.config, generated});
    if (scaling || export_class(target.hf_class, header).rope_scaling_null)
        b.config["rope_scaling"] = scaling.value_or(nullptr);
    b.add_token_ids();
    b.add_class_values();
    b.config["torch_dtype"] = torch_dtype;
    return b.config;
}

// GenerationConfig.from_model_config keeps the config's generation values: the token ids.
ordered_json export_generation_config(const ck::ModelHeader& header) {
    const ExportKeys keys(header, "");
    ordered_json generation = {{"_from_model_config", true}};
    for (const SpecialType& t : special_types)
        if (generation_token_type(t.type))
            if (const auto id = keys.count(t.id_key))
                generation[std::string(t.type) + "_token_id"] = *id;
    return generation;
}

bool is_generated_tensor(std::string_view gguf_name) {
    const auto& names = ck::llama::rope_factor_tensor_names;
    return std::find(std::begin(names), std::end(names), gguf_name) != std::end(names);
}

}  // namespace ckplugin::hf
