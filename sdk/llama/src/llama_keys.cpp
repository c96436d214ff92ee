#include "ck/llama/llama_keys.hpp"

#include <limits>

#include "ck/error.hpp"
#include "ck/llama/hparams.hpp"

namespace ck::llama {
namespace {

std::optional<FloatParam> as_float_param(const FoundValue& found) {
    const Value& v = *found.value;
    if (v.type() == ValueType::f32) return FloatParam{*v.as_double(), true};
    if (auto d = v.as_double()) return FloatParam{*d, false};
    throw key_error("expected a number, got " + v.to_display(), found.key);
}

// Head packing cuts every layer the same way: a per-layer count must be one number.
std::uint32_t one_for_every_layer(const PerLayer& values) {
    if (!values.uniform())
        throw key_error(
            "per-layer values differ from layer to layer; bump and head packing "
            "need the same number in every layer",
            values.key());
    return values.first();
}

}  // namespace

ArchKeys::ArchKeys(const Metadata& metadata) : metadata_(metadata), arch_("llama") {
    if (const Value* v = metadata.find("general.architecture");
        v && v->type() == ValueType::string && !v->str().empty())
        arch_ = v->str();
}

std::optional<FoundValue> ArchKeys::find(std::string_view suffix) const {
    std::string own = key(suffix);
    if (const Value* v = metadata_.find(own)) return FoundValue{v, own};
    std::string fallback = "llama." + std::string(suffix);
    if (const Value* v = metadata_.find(fallback)) return FoundValue{v, fallback};
    return std::nullopt;
}

std::optional<std::uint32_t> ArchKeys::u32(std::string_view suffix) const {
    auto found = find(suffix);
    if (!found) return std::nullopt;
    auto n = found->value->as_uint();
    if (!n || *n > std::numeric_limits<std::uint32_t>::max())
        throw key_error(
            "expected an integer between 0 and 4294967295, got " + found->value->to_display(),
            found->key);
    return static_cast<std::uint32_t>(*n);
}

std::optional<FloatParam> ArchKeys::number(std::string_view suffix) const {
    auto found = find(suffix);
    if (!found) return std::nullopt;
    return as_float_param(*found);
}

std::optional<FloatParam> ArchKeys::number_exact(std::string_view key) const {
    const Value* v = metadata_.find(key);
    if (!v) return std::nullopt;
    return as_float_param(FoundValue{v, std::string(key)});
}

HeadGeometry head_geometry(const ModelHeader& header, const ArchKeys& keys) {
    return head_geometry(header, read_hyperparameters(keys.metadata()));
}

HeadGeometry head_geometry(const ModelHeader& header, const Hyperparameters& hp) {
    const TensorInfo* embd = header.find_tensor(token_embd_name);
    if (!embd)
        throw tensor_error(
            "required tensor is missing (its width is the embedding length the attention "
            "heads are cut from)",
            token_embd_name);
    if (embd->ne.size() != 2)
        throw tensor_error("expected 2 dimensions [embedding_length, vocab_size], got " +
                               std::to_string(embd->ne.size()) + " " + embd->shape_string(),
                           token_embd_name);
    if (embd->ne[0] <= 0 || embd->ne[0] > std::numeric_limits<std::uint32_t>::max())
        throw tensor_error("embedding width " + std::to_string(embd->ne[0]) + " is out of range",
                           token_embd_name);

    HeadGeometry g;
    g.embed = hp.embedding_length.value_or(static_cast<std::uint32_t>(embd->ne[0]));
    if (g.embed != static_cast<std::uint64_t>(embd->ne[0]))
        throw tensor_error("ne0 is " + std::to_string(embd->ne[0]) + ", expected " +
                               std::to_string(g.embed) + " (" + hp.key("embedding_length") + ")",
                           token_embd_name);

    if (!hp.head_count)
        throw key_error("required key is missing (the number of attention heads)",
                        hp.key("attention.head_count"));
    g.heads = one_for_every_layer(*hp.head_count);
    if (g.heads == 0) throw key_error("expected at least 1 head, got 0", hp.head_count->key());
    g.kv_heads = hp.head_count_kv ? one_for_every_layer(*hp.head_count_kv) : g.heads;
    if (g.kv_heads == 0)
        throw key_error("expected at least 1 kv head, got 0", hp.head_count_kv->key());

    // The tensors that cannot be cut into heads are the ones named.
    if (g.embed % g.heads != 0)
        throw tensor_error("embedding_length " + std::to_string(g.embed) +
                               " is not a multiple of head_count " + std::to_string(g.heads) +
                               " (expected E % H == 0, got remainder " +
                               std::to_string(g.embed % g.heads) + ")",
                           "blk.0.attn_q.weight");
    if (g.heads % g.kv_heads != 0)
        throw tensor_error("head_count " + std::to_string(g.heads) + " is not a multiple of " +
                               "head_count_kv " + std::to_string(g.kv_heads) +
                               " (expected H % Hkv == 0, got remainder " +
                               std::to_string(g.heads % g.kv_heads) + ")",
                           "blk.0.attn_k.weight");
    g.head_dim = g.embed / g.heads;
    return g;
}

std::optional<RopeScaling> rope_scaling(const ArchKeys& keys) {
    std::string factor_key = keys.key("rope.scaling.factor");
    std::optional<FloatParam> factor = keys.number("rope.scaling.factor");
    if (factor) {
        factor_key = keys.find("rope.scaling.factor")->key;
    } else if ((factor = keys.number("rope.scale_linear"))) {
        factor_key = keys.find("rope.scale_linear")->key;
    }
    if (!factor || factor->value == 0.0 || factor->value == 1.0) return std::nullopt;
    RopeScaling scaling{"linear", *factor, factor_key};
    if (const auto type = keys.find("rope.scaling.type");
        type && type->value->type() == ValueType::string)
        scaling.type = type->value->str();
    return scaling;
}

}  // namespace ck::llama
