#include "hf_config.hpp"

#include <cctype>

#include "ck/error.hpp"

using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

// Multimodal configs keep the language model's keys under text_config; the converter's
// TextModel lifts them to the top level (its keys win).
ordered_json fold_text_config(ordered_json config) {
    const auto text = config.find("text_config");
    if (text == config.end() || !text->is_object()) return config;
    const ordered_json inner = *text;
    for (auto it = inner.begin(); it != inner.end(); ++it) config[it.key()] = it.value();
    return config;
}

}  // namespace

Hparams::Hparams(ordered_json config, std::string file)
    : config_(fold_text_config(std::move(config))), file_(std::move(file)) {
    const ordered_json* given = find({"rope_parameters", "rope_scaling"});
    rope_ = given && given->is_object() ? *given : ordered_json::object();
    if (rope_.contains("full_attention") || rope_.contains("sliding_attention")) return;
    auto mirror = [this](const char* into, std::initializer_list<const char*> keys) {
        if (rope_.contains(into)) return;
        if (const ordered_json* v = find(keys)) rope_[into] = *v;
    };
    if (const ordered_json* local =
            find({"local_rope_theta", "rope_local_theta", "rope_theta_local", "swa_rope_theta",
                  "rope_local_base_freq"}))
        rope_["sliding_attention"] = {{"rope_theta", *local}};
    mirror("rope_theta", {"global_rope_theta", "rope_global_theta", "rope_theta_global",
                          "rope_theta", "rotary_emb_base"});
    if (!rope_.contains("rope_type") && rope_.contains("type")) rope_["rope_type"] = rope_["type"];
    mirror("partial_rotary_factor", {"partial_rotary_factor", "rope_pct", "rope_percent"});
    mirror("original_max_position_embeddings", {"original_max_position_embeddings"});
}

const ordered_json* Hparams::find(const std::vector<const char*>& keys) const {
    for (const char* k : keys)
        if (const auto it = config_.find(k); it != config_.end() && !it->is_null()) return &*it;
    return nullptr;
}

std::optional<std::uint32_t> Hparams::u32(const std::vector<const char*>& keys) const {
    for (const char* k : keys) {
        const auto it = config_.find(k);
        if (it == config_.end() || it->is_null()) continue;
        if (!it->is_number_unsigned() || it->get<std::uint64_t>() > UINT32_MAX)
            fail(k, "is " + it->dump() + ", not a count");
        return it->get<std::uint32_t>();
    }
    return std::nullopt;
}

std::uint32_t Hparams::required_u32(const std::vector<const char*>& keys) const {
    const auto v = u32(keys);
    if (!v) fail(keys.front(), "is missing");
    return *v;
}

std::optional<double> Hparams::number(const std::vector<const char*>& keys) const {
    const ordered_json* v = find(keys);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail(keys.front(), "is " + v->dump() + ", not a number");
    return v->get<double>();
}

std::uint32_t Hparams::head_dim_or_split() const {
    const auto head_dim = u32({"head_dim"});
    const std::uint32_t heads = required_u32({"num_attention_heads"});
    if (!head_dim && heads == 0) fail("num_attention_heads", "is 0");
    return head_dim ? *head_dim : required_u32({"hidden_size"}) / heads;
}

std::optional<std::int64_t> Hparams::partial_rotary_dims() const {
    const std::uint32_t hidden = required_u32({"hidden_size", "n_embd"});
    const std::uint32_t heads = required_u32({"num_attention_heads", "n_head"});
    if (heads == 0) return std::nullopt;
    const auto factor = rope_.find("partial_rotary_factor");
    const double rotary =
        factor != rope_.end() && factor->is_number() ? factor->get<double>() : 1.0;
    return static_cast<std::int64_t>(rotary * hidden) / heads;
}

const ordered_json& Hparams::full_attention_rope() const {
    const auto full = rope_.find("full_attention");
    return full != rope_.end() && full->is_object() ? *full : rope_;
}

std::string Hparams::rope_type() const {
    const ordered_json& r = full_attention_rope();
    const auto type = r.find("rope_type");
    return type != r.end() && type->is_string() ? type->get<std::string>() : std::string();
}

std::string Hparams::rope_type_lowercase() const {
    std::string type = rope_type();
    for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return type;
}

void Hparams::fail(const char* key, const std::string& what) const {
    throw ck::Error(std::string("\"") + key + "\" " + what, file_, std::nullopt,
                    std::string("key '") + key + "'");
}

}  // namespace ckplugin::hf
