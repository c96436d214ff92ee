#include "export_rope.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ck/error.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/support/python_float.hpp"

using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

std::string float_text(double v) {
    return ck::support::python_float_repr(v, false);
}

constexpr std::string_view long_factors_name = ck::llama::rope_factor_tensor_names[1];
constexpr std::string_view short_factors_name = ck::llama::rope_factor_tensor_names[2];

// The llama3 parameters tried, each list in order of preference: Llama 3.1 and 3.2 use
// (low 1, high 4, original 8192); the others are the powers of two around them that a
// fine-tune or another release could choose.
constexpr std::uint32_t llama3_original_contexts[] = {8192, 4096,  2048,   16384,  32768,
                                                      1024, 65536, 131072, 262144, 524288};
constexpr double llama3_low_factors[] = {1, 0.5, 2, 0.25, 4};
constexpr double llama3_high_factors[] = {4, 8, 2, 16, 32, 1, 64};

bool same_bits(const std::vector<float>& a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), b.size() * sizeof(float)) == 0;
}

[[noreturn]] void refuse_tensor(const RopeExport& in, std::string_view name,
                                const std::string& why) {
    throw ck::tensor_error(why, name, in.keys.header().source);
}

std::uint32_t config_count(const RopeExport& in, const char* name, const std::string& key) {
    const auto v = in.config.find(name);
    if (v == in.config.end() || !v->is_number_unsigned())
        in.keys.fail(key, std::string("is missing: rope_scaling needs config.json's ") + name);
    return v->get<std::uint32_t>();
}

// The head dimension rope_freqs was made for: head_dim, else hidden_size / heads (as the
// converter's llama3 factors take it).
std::uint32_t rotary_head_dim(const RopeExport& in) {
    if (const auto head_dim = in.config.find("head_dim");
        head_dim != in.config.end() && head_dim->is_number_unsigned())
        return head_dim->get<std::uint32_t>();
    const std::string heads_key = in.keys.key("attention.head_count");
    const std::uint32_t heads = config_count(in, "num_attention_heads", heads_key);
    if (heads == 0) in.keys.fail(heads_key, "is 0");
    return config_count(in, "hidden_size", in.keys.key("embedding_length")) / heads;
}

void check_count(const RopeExport& in, const ck::TensorInfo& t, std::uint64_t expected,
                 const std::string& why) {
    if (t.elements() != expected)
        refuse_tensor(in, t.name,
                      "has " + std::to_string(t.elements()) + " values, expected " +
                          std::to_string(expected) + " (" + why + ")");
}

ordered_json llama3_scaling(const RopeExport& in, const ck::TensorInfo& tensor) {
    const std::uint32_t dim = rotary_head_dim(in);
    check_count(in, tensor, (dim + 1) / 2,
                "one per rotary pair of a head of " + std::to_string(dim));
    if (!in.generated) return {{"rope_type", "llama3"}};
    const std::vector<float>& values = in.generated->rope_freqs;
    if (values.size() != (dim + 1) / 2)
        refuse_tensor(in, tensor.name,
                      "was read with " + std::to_string(values.size()) + " values");
    const float base = in.keys.f32(in.keys.key("rope.freq_base")).value_or(10000.0f);
    const std::optional<Llama3Rope> rope = recover_llama3_rope(values, base, dim);
    if (!rope)
        refuse_tensor(in, tensor.name,
                      "matches no llama3 rope_scaling (factor, low_freq_factor, "
                      "high_freq_factor, original_max_position_embeddings) that llama.cpp's "
                      "converter would make it from with rope_theta " +
                          float_text(base) + " and a head of " + std::to_string(dim) +
                          ", so config.json cannot give it back");
    return {
        {"factor", json_f32(static_cast<float>(rope->factor))},
        {"high_freq_factor", rope->high_freq_factor},
        {"low_freq_factor", rope->low_freq_factor},
        {"original_max_position_embeddings", static_cast<std::uint32_t>(rope->original_context)},
        {"rope_type", "llama3"}};
}

// Phi-3's converter writes attn_factor from the type: sqrt(1 + ln(s) / ln(original)) for
// longrope (and su), 0.1 ln(s) + 1 for yarn, s = context / original (1 when s <= 1).
std::string longrope_type(const RopeExport& in) {
    const std::string key = in.keys.key("rope.scaling.attn_factor");
    const std::optional<float> stored = in.keys.f32(key);
    if (!stored) return "longrope";
    const double context =
        config_count(in, "max_position_embeddings", in.keys.key("context_length"));
    const double original = config_count(in, "original_max_position_embeddings",
                                         in.keys.key("rope.scaling.original_context_length"));
    const double scale = original > 0 ? context / original : 0;
    const double longrope = scale > 1 ? std::sqrt(1 + std::log(scale) / std::log(original)) : 1;
    const double yarn = scale > 1 ? 0.1 * std::log(scale) + 1 : 1;
    if (static_cast<float>(longrope) == *stored) return "longrope";
    if (static_cast<float>(yarn) == *stored) return "yarn";
    in.keys.fail(key, "is " + float_text(*stored) + ", which neither a longrope (" +
                          float_text(longrope) + ") nor a yarn (" + float_text(yarn) +
                          ") rope_scaling gives for a context of " +
                          std::to_string(static_cast<std::uint64_t>(context)) + " over " +
                          std::to_string(static_cast<std::uint64_t>(original)));
}

ordered_json factor_list(const RopeExport& in, const ck::TensorInfo& tensor,
                         const std::vector<float>& values, std::uint64_t expected) {
    if (values.size() != expected)
        refuse_tensor(in, tensor.name,
                      "was read with " + std::to_string(values.size()) + " values");
    ordered_json list = ordered_json::array();
    for (const float v : values) {
        if (!std::isfinite(v))
            refuse_tensor(in, tensor.name, "holds " + float_text(v) + ", not a JSON number");
        list.push_back(json_f32(v));
    }
    return list;
}

// Phi-3's long_factor and short_factor lists, rope dimensions / 2 values each.
ordered_json longrope_scaling(const RopeExport& in, const ck::TensorInfo* long_factors,
                              const ck::TensorInfo* short_factors) {
    if (!long_factors || !short_factors)
        refuse_tensor(in, long_factors ? short_factors_name : long_factors_name,
                      "is absent beside " +
                          std::string(long_factors ? long_factors_name : short_factors_name) +
                          ": config.json's rope_scaling holds both lists or neither");
    const std::string dims_key = in.keys.key("rope.dimension_count");
    const std::uint32_t dims = in.keys.count(dims_key).value_or(rotary_head_dim(in));
    if (dims % 2) in.keys.fail(dims_key, "is odd: the rope factors are one per rotary pair");
    for (const ck::TensorInfo* t : {long_factors, short_factors})
        check_count(in, *t, dims / 2, "one per rotary pair of " + std::to_string(dims) + " dims");
    ordered_json scaling = {{"type", longrope_type(in)}};
    if (!in.generated) return scaling;
    scaling["long_factor"] =
        factor_list(in, *long_factors, in.generated->rope_factors_long, dims / 2);
    scaling["short_factor"] =
        factor_list(in, *short_factors, in.generated->rope_factors_short, dims / 2);
    return scaling;
}

// yarn's optional factors: the converter's config name -> its GGUF key.
struct YarnFactor {
    const char* config;
    const char* gguf;
};
constexpr YarnFactor yarn_factors[] = {
    {"extrapolation_factor", "rope.scaling.yarn_ext_factor"},
    {"attention_factor", "rope.scaling.yarn_attn_factor"},
    {"beta_fast", "rope.scaling.yarn_beta_fast"},
    {"beta_slow", "rope.scaling.yarn_beta_slow"},
};

// The rope.scaling.* keys TextModel writes from rope_scaling (model_keys.cpp), inverted.
std::optional<ordered_json> keyed_scaling(const RopeExport& in, const std::string& type) {
    const std::string type_key = in.keys.key("rope.scaling.type");
    const auto& taken = in.architecture.rope_types;
    if (type == "longrope" || type == "su")
        in.keys.fail(type_key, "is '" + type +
                                   "' without the long and short factors config.json's "
                                   "rope_scaling must hold");
    if (std::find(taken.begin(), taken.end(), type) == taken.end() ||
        (type != "linear" && type != "yarn"))
        in.keys.fail(type_key, "is '" + type + "', a rope scaling llama.cpp's converter does not " +
                                   "write for " + std::string(in.architecture.classes.front()));
    const std::string factor_key = in.keys.key("rope.scaling.factor");
    const std::optional<float> factor = in.keys.f32(factor_key);
    if (!factor) in.keys.fail(factor_key, "is missing: a " + type + " rope_scaling has a factor");
    ordered_json scaling = {{"factor", json_f32(*factor)}, {"rope_type", type}};
    if (type == "linear") return scaling;
    const std::string original_key = in.keys.key("rope.scaling.original_context_length");
    const std::optional<std::uint32_t> original = in.keys.count(original_key);
    if (!original) in.keys.fail(original_key, "is missing: a yarn rope_scaling needs it");
    scaling["original_max_position_embeddings"] = *original;
    for (const YarnFactor& f : yarn_factors)
        if (const auto v = in.keys.f32(in.keys.key(f.gguf))) scaling[f.config] = json_f32(*v);
    return scaling;
}

bool writes_scaling_keys(const Architecture& a) {
    return std::any_of(a.keys.begin(), a.keys.end(),
                       [](const KeyRule& r) { return r.kind == KeyKind::rope_scaling; });
}

// The type llama.cpp reads: rope.scaling.type, else linear when there is a factor to apply.
std::optional<std::string> scaling_type(const RopeExport& in) {
    if (!writes_scaling_keys(in.architecture)) return std::nullopt;
    if (auto type = in.keys.text(in.keys.key("rope.scaling.type")))
        return *type == "none" || *type == "default" ? std::nullopt : type;
    const auto factor = in.keys.f32(in.keys.key("rope.scaling.factor"));
    if (factor && *factor != 0 && *factor != 1) return "linear";
    return std::nullopt;
}

// Each generated tensor present must be one the family's converter generates.
void check_generated_family(const RopeExport& in) {
    for (const std::string_view name : ck::llama::rope_factor_tensor_names) {
        if (!in.keys.header().find_tensor(name)) continue;
        const Generated family = name == ck::llama::rope_freqs_name ? Generated::llama3_rope_freqs
                                                                    : Generated::longrope_factors;
        if (family != in.architecture.generated)
            refuse_tensor(in, name,
                          "is a tensor llama.cpp's converter generates from config.json, but not "
                          "for " +
                              std::string(in.architecture.classes.front()) +
                              ": no config.json key of this class gives it back");
    }
}

}  // namespace

std::optional<Llama3Rope> recover_llama3_rope(std::span<const float> values, float base,
                                              std::uint32_t dim) {
    if (values.empty()) return std::nullopt;
    const auto [smallest, largest] = std::minmax_element(values.begin(), values.end());
    Llama3Rope r;
    r.base = base;
    for (const float factor : {*largest, *smallest})
        for (const std::uint32_t original : llama3_original_contexts)
            for (const double low : llama3_low_factors)
                for (const double high : llama3_high_factors) {
                    if (high <= low) continue;
                    r.factor = factor;
                    r.low_freq_factor = low;
                    r.high_freq_factor = high;
                    r.original_context = original;
                    if (same_bits(llama3_rope_factors(r, dim), values)) return r;
                }
    return std::nullopt;
}

std::optional<ordered_json> export_rope_scaling(const RopeExport& in) {
    check_generated_family(in);
    const ck::ModelHeader& header = in.keys.header();
    const ck::TensorInfo* freqs = header.find_tensor(ck::llama::rope_freqs_name);
    const ck::TensorInfo* long_factors = header.find_tensor(long_factors_name);
    const ck::TensorInfo* short_factors = header.find_tensor(short_factors_name);
    const std::optional<std::string> type = scaling_type(in);
    if (freqs) {
        if (type)
            in.keys.fail(in.keys.key("rope.scaling.type"),
                         "is '" + *type +
                             "' beside rope_freqs.weight: config.json holds one "
                             "rope_scaling");
        return llama3_scaling(in, *freqs);
    }
    if (long_factors || short_factors) return longrope_scaling(in, long_factors, short_factors);
    if (in.architecture.generated == Generated::longrope_factors)
        if (const std::string key = in.keys.key("rope.scaling.attn_factor"); in.keys.find(key))
            in.keys.fail(key,
                         "is set without rope_factors_long.weight and "
                         "rope_factors_short.weight: config.json gives it only with them");
    if (type) return keyed_scaling(in, *type);
    return std::nullopt;
}

}  // namespace ckplugin::hf
