#include "input_model.hpp"

#include <charconv>
#include <limits>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/hparams.hpp"

namespace ckplugin::bump {
using namespace ck;
namespace {

using llama::tensor_subject;

std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

// `blk.N.attn_norm.weight` -> N, for counting layers when block_count is absent.
std::optional<std::uint32_t> layer_of_attn_norm(std::string_view name) {
    constexpr std::string_view prefix = "blk.", suffix = ".attn_norm.weight";
    if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
    std::string_view digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    std::uint32_t n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty())
        return std::nullopt;
    return n;
}

std::uint32_t count_layers(const ModelHeader& header) {
    std::set<std::uint32_t> layers;
    for (const auto& t : header.tensors)
        if (auto n = layer_of_attn_norm(t.name)) layers.insert(*n);
    return static_cast<std::uint32_t>(layers.size());
}

std::uint32_t read_ffn(const llama::Hyperparameters& hp, TensorIndex& tensors) {
    if (const auto& ffn = hp.feed_forward_length) {
        // The bump header has one feed-forward size for the model.
        if (!ffn->uniform())
            throw key_error(
                "per-layer values differ from layer to layer; bump needs the same "
                "feed-forward size in every layer",
                ffn->key());
        return ffn->first();
    }
    const TensorInfo& gate = tensors.at(tensors.require("blk.0.ffn_gate.weight"));
    if (gate.ne.size() != 2)
        throw tensor_error("shape " + gate.shape_string() + ", expected [E, F] (2 dimensions)",
                           gate.name);
    return checked_u32(gate.ne[1], "feed_forward_length (ne1)", gate.name);
}

std::uint32_t read_context(const llama::Hyperparameters& hp, const GeometryOptions& options) {
    if (options.context) return *options.context;
    const auto& context = hp.context_length;
    if (!context)
        throw key_error(
            "required key is missing (give the context length with " + options.context_stage + ")",
            hp.key("context_length"));
    if (*context == 0)
        throw key_error(
            "context length 0 (expected at least 1; override with " + options.context_stage + ")",
            hp.key("context_length"));
    return *context;
}

}  // namespace

bool is_k_quant(std::uint32_t type) noexcept {
    return type == id(GgmlType::q4_k) || type == id(GgmlType::q6_k);
}

bool is_float_type(std::uint32_t type) noexcept {
    return type == id(GgmlType::f32) || type == id(GgmlType::f16) || type == id(GgmlType::bf16);
}

std::string type_string(std::uint32_t type) {
    return std::string(type_name(type));
}

TensorIndex::TensorIndex(const ModelHeader& header, std::string version)
    : header_(header), version_(std::move(version)) {
    for (std::size_t i = 0; i < header.tensors.size(); ++i)
        index_.emplace(header.tensors[i].name, i);
}

std::optional<std::size_t> TensorIndex::find(const std::string& name) {
    auto it = index_.find(name);
    if (it == index_.end()) return std::nullopt;
    used_.insert(it->second);
    return it->second;
}

std::size_t TensorIndex::require(const std::string& name) {
    if (auto i = find(name)) return *i;
    throw tensor_error("required tensor is missing (" + version_ +
                           " needs token_embd, output_norm and, per layer, attn_norm, ffn_norm, "
                           "attn_q/k/v/output and ffn_gate/up/down)",
                       name);
}

void TensorIndex::expect_shape(std::size_t index, const std::vector<std::int64_t>& expected,
                               const std::string& formula) const {
    const TensorInfo& t = header_.tensors[index];
    if (t.ne != expected)
        throw tensor_error("shape " + t.shape_string() + ", expected " +
                               TensorInfo{{}, 0, expected}.shape_string() + " (" + formula + ")",
                           t.name);
}

std::vector<std::string> TensorIndex::unused() const {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < header_.tensors.size(); ++i)
        if (!used(i)) names.push_back(header_.tensors[i].name);
    return names;
}

std::uint32_t checked_u32(std::int64_t v, const std::string& what, std::string_view tensor) {
    if (v <= 0 || v > std::numeric_limits<std::uint32_t>::max())
        throw tensor_error(
            what + " " + std::to_string(v) + " is out of range (expected 1 to 4294967295)", tensor);
    return static_cast<std::uint32_t>(v);
}

Geometry read_geometry(const ModelHeader& header, TensorIndex& tensors,
                       const GeometryOptions& options) {
    const llama::Hyperparameters hp = llama::read_hyperparameters(header.metadata);
    // token_embd first: a model without it is refused in this writer's words ("bump v4 needs
    // ..."), not in those of the shared head geometry.
    const TensorInfo& embd = tensors.at(tensors.require(std::string(llama::token_embd_name)));
    const llama::HeadGeometry heads = llama::head_geometry(header, hp);
    if (embd.ne.size() != 2)
        throw tensor_error("shape " + embd.shape_string() + ", expected [E, V] (2 dimensions)",
                           embd.name);
    Geometry g;
    static_cast<llama::HeadGeometry&>(g) = heads;
    g.aligned_head_dim = heads.head_dim;
    g.vocab = checked_u32(embd.ne[1], "vocab size (ne1)", embd.name);
    g.layers = hp.block_count.value_or(count_layers(header));
    g.ffn = read_ffn(hp, tensors);
    g.context = read_context(hp, options);
    return g;
}

std::optional<std::uint32_t> headpack_head_dim(const ModelHeader& header) {
    const Value* v = header.metadata.find(llama::aligned_head_dim_key);
    if (!v) return std::nullopt;
    if (v->type() != ValueType::u32)
        throw key_error("expected a u32, got " + v->to_display(), llama::aligned_head_dim_key);
    return static_cast<std::uint32_t>(v->raw());
}

Config make_config(const llama::ArchKeys& keys, const Geometry& g) {
    Config c;
    c.model_type = keys.arch();
    c.num_hidden_layers = g.layers;
    c.hidden_size = g.embed;
    c.intermediate_size = g.ffn;
    c.num_attention_heads = g.heads;
    c.num_key_value_heads = g.kv_heads;
    c.vocab_size = g.vocab;
    c.max_position_embeddings = g.context;
    // llama.cpp's key (deliberate difference 1), then the legacy key, then the default.
    auto eps = keys.number("attention.layer_norm_rms_epsilon");
    if (!eps) eps = keys.number_exact("llama.norm_rms_eps");
    c.rms_norm_eps = eps.value_or(llama::FloatParam{1e-5, false});
    c.rope_theta = keys.number("rope.freq_base").value_or(llama::FloatParam{10000.0, false});
    return c;
}

}  // namespace ckplugin::bump
