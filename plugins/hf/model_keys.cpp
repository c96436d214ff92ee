#include "model_keys.hpp"

#include <algorithm>

#include "ck/llama/file_type.hpp"

using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// Writes one family's keys; `prefix` is "<arch>.".
class KeyWriter {
  public:
    KeyWriter(const Hparams& hp, std::string prefix, ck::Metadata& md)
        : hp_(hp), prefix_(std::move(prefix)), md_(md) {}

    void write(const KeyRule& rule, std::uint32_t file_type);

  private:
    void u32(std::string_view key, std::uint32_t v) { md_.set(name(key), ck::Value::of_u32(v)); }
    void f32(std::string_view key, double v) {
        md_.set(name(key), ck::Value::of_f32(static_cast<float>(v)));
    }
    std::string name(std::string_view key) const { return prefix_ + std::string(key); }
    void hparam_u32(const KeyRule& rule);
    void hparam_f32(const KeyRule& rule);
    void rope_theta(const KeyRule& rule);
    void rope_scaling();
    void yarn(const ordered_json& rope);
    std::uint32_t rope_u32(const ordered_json& rope, const char* key) const;

    const Hparams& hp_;
    std::string prefix_;
    ck::Metadata& md_;
};

void KeyWriter::hparam_u32(const KeyRule& rule) {
    if (const auto v = hp_.u32(rule.names)) return u32(rule.key, *v);
    if (rule.presence == Presence::required) hp_.fail(rule.names.front(), "is missing");
    if (rule.presence == Presence::defaulted)
        u32(rule.key, static_cast<std::uint32_t>(rule.fallback));
}

void KeyWriter::hparam_f32(const KeyRule& rule) {
    if (const auto v = hp_.number(rule.names)) return f32(rule.key, *v);
    if (rule.presence == Presence::required) hp_.fail(rule.names.front(), "is missing");
    if (rule.presence == Presence::defaulted) f32(rule.key, rule.fallback);
}

void KeyWriter::rope_theta(const KeyRule& rule) {
    const ordered_json& rope = hp_.full_attention_rope();
    const auto theta = rope.find("rope_theta");
    if (theta != rope.end() && !theta->is_null()) {
        if (!theta->is_number()) hp_.fail("rope_theta", "is " + theta->dump() + ", not a number");
        return f32(rule.key, theta->get<double>());
    }
    if (rule.presence == Presence::required) hp_.fail("rope_theta", "is missing");
    if (rule.presence == Presence::defaulted) f32(rule.key, rule.fallback);
}

std::uint32_t KeyWriter::rope_u32(const ordered_json& rope, const char* key) const {
    const auto v = rope.find(key);
    if (v == rope.end() || !v->is_number_unsigned() || v->get<std::uint64_t>() > UINT32_MAX)
        hp_.fail("rope_scaling", std::string("needs ") + key + " as a count");
    return v->get<std::uint32_t>();
}

// TextModel's rope scaling block: keys for linear, yarn and longrope; llama3 is a tensor
// (generated_tensors.cpp); "default" means none.
void KeyWriter::rope_scaling() {
    const ordered_json& rope = hp_.full_attention_rope();
    const std::string type = hp_.rope_type();
    const auto factor = rope.find("factor");
    const bool has_factor = factor != rope.end() && factor->is_number();
    if (type == "linear" && has_factor) {
        md_.set(name("rope.scaling.type"), ck::Value::of_string("linear"));
        f32("rope.scaling.factor", factor->get<double>());
    } else if (type == "yarn" && has_factor) {
        yarn(rope);
    } else if (type == "su" || type == "longrope") {
        md_.set(name("rope.scaling.type"), ck::Value::of_string("longrope"));
    }
}

void KeyWriter::yarn(const ordered_json& rope) {
    md_.set(name("rope.scaling.type"), ck::Value::of_string("yarn"));
    f32("rope.scaling.factor", rope["factor"].get<double>());
    u32("rope.scaling.original_context_length", rope_u32(rope, "original_max_position_embeddings"));
    const std::pair<const char*, const char*> optional_floats[] = {
        {"extrapolation_factor", "rope.scaling.yarn_ext_factor"},
        {"attention_factor", "rope.scaling.yarn_attn_factor"},
        {"attn_factor", "rope.scaling.yarn_attn_factor"},
        {"beta_fast", "rope.scaling.yarn_beta_fast"},
        {"beta_slow", "rope.scaling.yarn_beta_slow"},
    };
    bool attn_written = false;
    for (const auto& [from, key] : optional_floats) {
        const auto v = rope.find(from);
        if (v == rope.end() || !v->is_number()) continue;
        const bool attn = std::string_view(key).ends_with("attn_factor");
        if (attn && attn_written) continue;  // attention_factor wins over attn_factor
        attn_written = attn_written || attn;
        f32(key, v->get<double>());
    }
}

void KeyWriter::write(const KeyRule& rule, std::uint32_t file_type) {
    const ordered_json& config = hp_.json();
    switch (rule.kind) {
        case KeyKind::u32:
            return hparam_u32(rule);
        case KeyKind::f32:
            return hparam_f32(rule);
        case KeyKind::truthy_f32: {
            const ordered_json* v = hp_.find(rule.names);
            if (v && v->is_number() && v->get<double>() != 0) f32(rule.key, v->get<double>());
            return;
        }
        case KeyKind::rope_theta:
            return rope_theta(rule);
        case KeyKind::rope_theta_swa: {
            const auto swa = hp_.rope().find("sliding_attention");
            if (swa != hp_.rope().end() && swa->is_object() && swa->contains("rope_theta") &&
                (*swa)["rope_theta"].is_number())
                f32(rule.key, (*swa)["rope_theta"].get<double>());
            return;
        }
        case KeyKind::rope_scaling:
            return rope_scaling();
        case KeyKind::head_dim_lengths:
            if (const auto head_dim = hp_.u32({"head_dim"})) {
                u32("attention.key_length", *head_dim);
                u32("attention.value_length", *head_dim);
            }
            return;
        case KeyKind::file_type:
            md_.set(std::string(ck::llama::file_type_key), ck::Value::of_u32(file_type));
            return;
        case KeyKind::head_dim_or_split:
            return u32(rule.key, hp_.head_dim_or_split());
        case KeyKind::partial_rotary_dims: {
            const std::optional<std::int64_t> dims = hp_.partial_rotary_dims();
            if (!dims) hp_.fail("num_attention_heads", "is 0");
            return u32(rule.key, static_cast<std::uint32_t>(*dims));
        }
        case KeyKind::original_context_length:
            return u32(rule.key, rope_u32(hp_.rope(), "original_max_position_embeddings"));
        case KeyKind::causal:
            if (const auto c = config.find("is_causal");
                c != config.end() && c->is_boolean() && !c->get<bool>())
                md_.set(name(rule.key), ck::Value::of_bool(false));
            return;
        case KeyKind::sliding_window_unless_every_layer: {
            const auto pattern = config.find("sliding_window_pattern");
            if (pattern != config.end() && pattern->is_number() && pattern->get<double>() == 1)
                return;
            return u32(rule.key, hp_.required_u32({"sliding_window"}));
        }
    }
}

}  // namespace

void add_architecture_keys(const Architecture& architecture, const Hparams& hp,
                           std::uint32_t file_type, ck::Metadata& metadata) {
    KeyWriter writer(hp, std::string(architecture.arch) + ".", metadata);
    for (const KeyRule& rule : architecture.keys) writer.write(rule, file_type);
}

void check_config(const Architecture& architecture, const Hparams& hp) {
    for (const char* key : architecture.must_be_null)
        if (hp.find({key}))
            hp.fail(key, "is set, which llama.cpp's " + std::string(architecture.arch) +
                             " conversion does not take");
    const std::string type = hp.rope_type_lowercase();
    if (type.empty()) return;
    const auto& taken = architecture.rope_types;
    if (std::find(taken.begin(), taken.end(), type) != taken.end()) return;
    std::string list;
    for (std::string_view t : taken) list += (list.empty() ? "" : ", ") + std::string(t);
    hp.fail("rope_scaling", "has type '" + type +
                                "', which llama.cpp's converter does not take for " +
                                std::string(architecture.arch) + " (it takes: " + list + ")");
}

}  // namespace ckplugin::hf
