#include "generated_tensors.hpp"

#include <cmath>
#include <numbers>

#include "ck/error.hpp"

using nlohmann::ordered_json;

namespace ckplugin::hf {
namespace {

double rope_number(const ordered_json& rope, const char* key, double fallback) {
    const auto v = rope.find(key);
    return v != rope.end() && v->is_number() ? v->get<double>() : fallback;
}

std::vector<GeneratedTensor> llama3_tensors(const Hparams& hp) {
    const ordered_json& rope = hp.full_attention_rope();
    Llama3Rope r;
    r.base = rope_number(rope, "rope_theta", 10000.0);
    r.factor = rope_number(rope, "factor", 8.0);
    r.low_freq_factor = rope_number(rope, "low_freq_factor", 1.0);
    r.high_freq_factor = rope_number(rope, "high_freq_factor", 4.0);
    r.original_context = rope_number(rope, "original_max_position_embeddings", 8192);
    const std::uint32_t dim = hp.head_dim_or_split();
    if (dim < 2) hp.fail("head_dim", "leaves no rotary pairs for rope_freqs");
    return {{"rope_freqs.weight", llama3_rope_factors(r, dim)}};
}

std::vector<float> float_list(const Hparams& hp, const ordered_json& rope, const char* key) {
    const auto list = rope.find(key);
    if (list == rope.end() || !list->is_array())
        hp.fail("rope_scaling", std::string("has no ") + key + " list");
    std::vector<float> values;
    for (const auto& v : *list) {
        if (!v.is_number()) hp.fail("rope_scaling", std::string(key) + " holds " + v.dump());
        values.push_back(static_cast<float>(v.get<double>()));
    }
    return values;
}

// Phi3MiniModel.generate_extra_tensors: only when the rope parameters carry long_factor.
GeneratedTensors longrope_tensors(const Hparams& hp) {
    const ordered_json& rope = hp.rope();
    const auto long_factor = rope.find("long_factor");
    if (long_factor == rope.end() || long_factor->is_null() ||
        (long_factor->is_array() && long_factor->empty()))
        return {};
    const std::uint32_t max_positions = hp.required_u32({"n_positions", "max_position_embeddings"});
    const auto original = rope.find("original_max_position_embeddings");
    if (original == rope.end() || !original->is_number_unsigned() || original->get<double>() < 1)
        hp.fail("original_max_position_embeddings", "is missing");
    const double scale = max_positions / original->get<double>();
    const std::string type = hp.rope_type_lowercase();
    double attn_factor = 1.0;
    if (type == "su" || type == "longrope") {
        if (scale > 1.0)
            attn_factor = std::sqrt(1 + std::log(scale) / std::log(original->get<double>()));
    } else if (type == "yarn") {
        if (scale > 1.0) attn_factor = 0.1 * std::log(scale) + 1.0;
    } else {
        hp.fail("rope_scaling", type.empty()
                                    ? "has long_factor but no type"
                                    : "of type '" + type + "' has no long-context factors");
    }
    GeneratedTensors out;
    out.attn_factor = static_cast<float>(attn_factor);
    std::vector<float> long_values = float_list(hp, rope, "long_factor");
    std::vector<float> short_values = float_list(hp, rope, "short_factor");
    const std::int64_t rope_dims = hp.partial_rotary_dims().value_or(0);
    if (long_values.size() != short_values.size() ||
        static_cast<double>(long_values.size()) != static_cast<double>(rope_dims) / 2)
        hp.fail("rope_scaling", "long_factor and short_factor must both have " +
                                    std::to_string(rope_dims / 2) +
                                    " values (rope dimensions / 2)");
    out.tensors.push_back({"rope_factors_long.weight", std::move(long_values)});
    out.tensors.push_back({"rope_factors_short.weight", std::move(short_values)});
    return out;
}

}  // namespace

std::vector<float> llama3_rope_factors(const Llama3Rope& r, std::uint32_t dim) {
    // torch evaluates the converter's formula on float32 tensors: each step rounds to float32,
    // a Python scalar divided by a tensor is reciprocal(tensor) * scalar, and the scalars are
    // rounded to float32 where they meet a tensor. Doing it in double and rounding once gives
    // other bits (docs/formats/hf.md).
    const float base = static_cast<float>(r.base), factor = static_cast<float>(r.factor);
    const float low = static_cast<float>(r.low_freq_factor);
    const float original = static_cast<float>(r.original_context);
    const float low_wavelen = static_cast<float>(r.original_context / r.low_freq_factor);
    const float high_wavelen = static_cast<float>(r.original_context / r.high_freq_factor);
    const float span = static_cast<float>(r.high_freq_factor - r.low_freq_factor);
    const float two_pi = static_cast<float>(2 * std::numbers::pi);
    std::vector<float> values;
    for (std::uint32_t i = 0; i < dim; i += 2) {  // torch.arange(0, dim, 2)
        const float exponent = static_cast<float>(i) / static_cast<float>(dim);
        const float freq = 1.0f / powf(base, exponent);  // glibc's, as torch calls it
        const float wavelen = (1.0f / freq) * two_pi;
        if (wavelen < high_wavelen) {
            values.push_back(1.0f);
        } else if (wavelen > low_wavelen) {
            values.push_back(factor);
        } else {
            const float smooth = ((1.0f / wavelen) * original - low) / span;
            values.push_back(1.0f / ((1.0f - smooth) / factor + smooth));
        }
    }
    return values;
}

GeneratedTensors generate_tensors(const Architecture& architecture, const Hparams& hp) {
    switch (architecture.generated) {
        case Generated::none:
            return {};
        case Generated::llama3_rope_freqs:
            if (hp.rope_type_lowercase() != "llama3") return {};
            return {llama3_tensors(hp), std::nullopt};
        case Generated::longrope_factors:
            return longrope_tensors(hp);
    }
    return {};
}

}  // namespace ckplugin::hf
