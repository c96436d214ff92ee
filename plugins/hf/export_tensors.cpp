#include "export_tensors.hpp"

#include <algorithm>
#include <optional>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/llama/hparams.hpp"
#include "ck/parallel.hpp"
#include "ck/safetensors/format.hpp"
#include "ck/support/little_endian.hpp"
#include "export_config.hpp"

namespace ckplugin::hf {
namespace {

using Action = TensorExport::Action;
using ck::GgmlType;

// Values converted per pool item: as the dequant transform's items, 1 Mi values.
constexpr std::uint64_t item_values = 1 << 20;

// A GGUF tensor name taken apart: "blk.3.attn_q.weight" is layer 3, "attn_q", ".weight".
struct GgufName {
    std::optional<std::uint64_t> layer;
    std::string base;
    std::string suffix;
};

// Nullopt for a name the reader never writes: no .weight/.bias, a layer number that is not a
// plain decimal (the reader's names have no leading zeros).
std::optional<GgufName> split_name(const std::string& name) {
    const auto dot = name.rfind('.');
    if (dot == std::string::npos) return std::nullopt;
    GgufName n{std::nullopt, name.substr(0, dot), name.substr(dot)};
    if (n.suffix != ".weight" && n.suffix != ".bias") return std::nullopt;
    if (!n.base.starts_with("blk.")) return n;
    const auto end = n.base.find('.', 4);
    if (end == std::string::npos) return std::nullopt;
    const std::string digits = n.base.substr(4, end - 4);
    if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0') ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    n.layer = std::stoull(digits);
    n.base = n.base.substr(end + 1);
    return n;
}

struct ExportInputs {
    const ck::ModelHeader& header;
    const Architecture& architecture;
    ck::llama::Hyperparameters hp;
};

[[noreturn]] void refuse(const ExportInputs& in, const ck::TensorInfo& t, const std::string& why) {
    throw ck::tensor_error(why, t.name, in.header.source);
}

[[noreturn]] void refuse_unnamed(const ExportInputs& in, const ck::TensorInfo& t) {
    refuse(in, t,
           "has no Hugging Face name in " + std::string(in.architecture.classes.front()) +
               "'s checkpoint (general.architecture " + std::string(in.architecture.arch) +
               "): the hf writer cannot place it");
}

void check_type(const ExportInputs& in, const ck::TensorInfo& t) {
    const ck::TypeInfo* type = ck::find_type(t.type);
    if (type && !type->removed && ck::kernels::plugin_dequant_table().fn[t.type]) return;
    refuse(in, t,
           "is " + std::string(ck::type_name(t.type)) +
               ", which the hf writer cannot turn into the F32, F16 or BF16 values of a Hugging "
               "Face checkpoint");
}

ExportedTensor whole(const ck::TensorInfo& t, std::string name) {
    return {std::move(name), ck::safetensors::reversed(t.ne), 0, t.rows()};
}

// The heads of a q/k weight of layer `layer` (the reader's: head_count for q, head_count_kv,
// else head_count, for k), each `rows / heads` rows of rotary pairs.
std::uint64_t head_rows(const ExportInputs& in, const ck::TensorInfo& t, std::uint64_t layer,
                        bool is_k) {
    const auto& hp = in.hp;
    if (!hp.head_count)
        throw ck::key_error("is needed to undo the q/k row permutation, and is absent",
                            hp.key("attention.head_count"), in.header.source);
    const auto& counts = is_k && hp.head_count_kv ? *hp.head_count_kv : *hp.head_count;
    if (layer >= counts.values().size() && counts.values().size() != 1)
        throw ck::key_error("has no value for layer " + std::to_string(layer), counts.key(),
                            in.header.source);
    const std::uint64_t heads = counts.layer(layer);
    if (t.ne.size() != 2 || heads == 0 || t.ne[1] <= 0 ||
        t.ne[1] % static_cast<std::int64_t>(2 * heads) != 0)
        refuse(in, t,
               "of shape " + t.shape_string() + " cannot be split into " + std::to_string(heads) +
                   " heads of rotary pairs (" + counts.key() + ")");
    return static_cast<std::uint64_t>(t.ne[1]) / heads;
}

// A stacked expert tensor {cols, rows, n_expert}: one Hugging Face tensor per expert.
TensorExport plan_experts(const ExportInputs& in, const ck::TensorInfo& t, std::uint64_t layer,
                          const ExpertPart& part, TensorExport e) {
    if (t.ne.size() != 3 || t.ne[2] <= 0)
        refuse(in, t, "of shape " + t.shape_string() + " is not a stack of experts");
    const auto experts = static_cast<std::uint64_t>(t.ne[2]);
    if (in.hp.expert_count != 0 && experts != in.hp.expert_count)
        refuse(in, t,
               "stacks " + std::to_string(experts) + " experts, but " + in.hp.key("expert_count") +
                   " is " + std::to_string(in.hp.expert_count));
    const std::string prefix = "model.layers." + std::to_string(layer) + "." +
                               std::string(in.architecture.experts->container) + ".";
    const auto rows = static_cast<std::uint64_t>(t.ne[1]);
    e.action = Action::split_experts;
    for (std::uint64_t x = 0; x < experts; ++x)
        e.parts.push_back({prefix + std::to_string(x) + "." + std::string(part.hf) + ".weight",
                           {t.ne[1], t.ne[0]},
                           x * rows,
                           rows});
    return e;
}

// A tensor of layer `layer`: the family's layer names, its expert stacks, the q/k permutation.
TensorExport plan_layer_tensor(const ExportInputs& in, const ck::TensorInfo& t,
                               const GgufName& name, TensorExport e) {
    const Architecture& a = in.architecture;
    if (!in.hp.block_count)
        throw ck::key_error("is absent: the layers cannot be counted", in.hp.key("block_count"),
                            in.header.source);
    if (*name.layer >= *in.hp.block_count)
        refuse(in, t,
               "is in layer " + std::to_string(*name.layer) + ", but " + in.hp.key("block_count") +
                   " is " + std::to_string(*in.hp.block_count));
    if (a.experts && name.suffix == ".weight")
        for (const ExpertPart& part : a.experts->parts)
            if (name.base == part.gguf) return plan_experts(in, t, *name.layer, part, std::move(e));
    const auto rule = std::find_if(a.layer_names.begin(), a.layer_names.end(),
                                   [&](const NameRule& r) { return r.gguf == name.base; });
    if (rule == a.layer_names.end()) refuse_unnamed(in, t);
    e.parts = {whole(t, "model.layers." + std::to_string(*name.layer) + "." +
                            std::string(rule->hf) + name.suffix)};
    const bool is_q = name.base == "attn_q", is_k = name.base == "attn_k";
    if (a.permute_qk && (is_q || is_k) && name.suffix == ".weight") {
        e.action = Action::unpermute_rows;
        e.head_rows = head_rows(in, t, *name.layer, is_k);
    }
    return e;
}

// A tensor outside the layers: the embedding, the final norm, lm_head.
TensorExport plan_model_tensor(const ExportInputs& in, const ck::TensorInfo& t,
                               const GgufName& name, TensorExport e) {
    const auto rule = std::find_if(std::begin(model_names), std::end(model_names),
                                   [&](const NameRule& r) { return r.gguf == name.base; });
    if (rule == std::end(model_names)) refuse_unnamed(in, t);
    if (in.architecture.skip_lm_head && rule->hf == "lm_head")
        refuse(in, t,
               "cannot be represented: " + std::string(in.architecture.classes.front()) +
                   " ties lm_head to model.embed_tokens (the hf reader ignores an "
                   "lm_head.weight for it), so a separate output matrix would be lost");
    e.parts = {whole(t, std::string(rule->hf) + name.suffix)};
    return e;
}

// The tensors the converter generates: which family's, and which config value they hold.
struct GeneratedTensorName {
    std::string_view name;
    Generated family;
    std::vector<float> GeneratedValues::*values;
};
constexpr GeneratedTensorName generated_names[] = {
    {"rope_freqs.weight", Generated::llama3_rope_freqs, &GeneratedValues::rope_freqs},
    {"rope_factors_long.weight", Generated::longrope_factors, &GeneratedValues::rope_factors_long},
    {"rope_factors_short.weight", Generated::longrope_factors,
     &GeneratedValues::rope_factors_short},
};

// A generated tensor is read for config.json, and must be one this family's converter makes.
TensorExport plan_generated(const ExportInputs& in, const ck::TensorInfo& t, TensorExport e) {
    const auto known = std::find_if(std::begin(generated_names), std::end(generated_names),
                                    [&](const GeneratedTensorName& g) { return g.name == t.name; });
    if (known == std::end(generated_names) || known->family != in.architecture.generated)
        refuse(in, t,
               "is a tensor llama.cpp's converter generates from config.json, but not for " +
                   std::string(in.architecture.classes.front()) +
                   ": no config.json key of this class gives it back");
    check_type(in, t);
    e.action = Action::generated;
    return e;
}

TensorExport plan_one(const ExportInputs& in, std::size_t index) {
    const ck::TensorInfo& t = in.header.tensors[index];
    TensorExport e;
    e.source = index;
    if (is_generated_tensor(t.name)) return plan_generated(in, t, std::move(e));
    check_type(in, t);
    const std::optional<GgufName> name = split_name(t.name);
    if (!name) refuse_unnamed(in, t);
    e = name->layer ? plan_layer_tensor(in, t, *name, std::move(e))
                    : plan_model_tensor(in, t, *name, std::move(e));
    if (in.architecture.norm_plus_one && e.parts.front().name.ends_with("norm.weight"))
        e.action = Action::unshift_norm;
    return e;
}

}  // namespace

std::vector<TensorExport> plan_export(const ck::ModelHeader& header,
                                      const Architecture& architecture) {
    const ExportInputs in{header, architecture,
                          ck::llama::read_hyperparameters(header.metadata, header.source)};
    std::vector<TensorExport> plan;
    plan.reserve(header.tensors.size());
    for (std::size_t i = 0; i < header.tensors.size(); ++i) plan.push_back(plan_one(in, i));
    return plan;
}

std::vector<float>* generated_values_of(GeneratedValues& values, std::string_view gguf_name) {
    for (const GeneratedTensorName& g : generated_names)
        if (g.name == gguf_name) return &(values.*g.values);
    return nullptr;
}

void convert_values(const std::byte* in, std::uint32_t type, std::size_t count, std::byte* out,
                    std::uint32_t dtype, bool unshift) {
    const ck::kernels::DequantFn dequant = ck::kernels::plugin_dequant_table().fn[type];
    if (dtype == static_cast<std::uint32_t>(GgmlType::f32)) {
        auto* values = reinterpret_cast<float*>(out);
        dequant(in, values, count);
        if (unshift)
            for (std::size_t i = 0; i < count; ++i) values[i] -= 1.0f;
        ck::le::in_place(values, count);  // host floats to the tensor's byte order
        return;
    }
    const ck::kernels::NarrowTable& narrow = ck::kernels::plugin_narrow_table();
    const ck::kernels::NarrowFn round =
        dtype == static_cast<std::uint32_t>(GgmlType::f16) ? narrow.to_f16 : narrow.to_bf16;
    const ck::TypeInfo& from = *ck::find_type(type);
    auto* halves = reinterpret_cast<std::uint16_t*>(out);
    if (!unshift) {
        ck::kernels::dequantize_and_narrow(dequant, round, from, in, halves, count);
        return;
    }
    // x - 1 in F32, a scratch of F32 values at a time (a multiple of every block).
    float scratch[ck::kernels::narrow_scratch_elements];
    for (std::size_t first = 0; first < count; first += std::size(scratch)) {
        const std::size_t n = std::min(std::size(scratch), count - first);
        dequant(in + first / from.block_size * from.block_bytes, scratch, n);
        for (std::size_t i = 0; i < n; ++i) scratch[i] -= 1.0f;
        round(scratch, halves + first, n);
    }
}

void convert_rows(const ck::TensorView& block, const ck::TensorInfo& info, std::uint64_t rows,
                  std::uint32_t dtype, bool unshift, std::span<std::byte> out) {
    const auto row_values = static_cast<std::uint64_t>(info.ne.front());
    const std::uint64_t in_row = info.row_bytes();
    const std::uint64_t out_row = row_values * ck::find_type(dtype)->block_bytes;
    const std::uint64_t item_rows = std::max<std::uint64_t>(1, item_values / row_values);
    ck::parallel_chunks(rows, item_rows, [&](std::size_t first, std::size_t end) {
        convert_values(block.data() + first * in_row, info.type, (end - first) * row_values,
                       out.data() + first * out_row, dtype, unshift);
        // Rows read are not read again: a mapped input's pages leave the resident set.
        block.release(first * in_row, end * in_row);
    });
}

}  // namespace ckplugin::hf
