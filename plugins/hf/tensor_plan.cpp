#include "tensor_plan.hpp"

#include <cstring>
#include <map>
#include <regex>
#include <unordered_set>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/llama/tensors.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"

namespace ckplugin::hf {

std::regex expert_pattern(const ExpertLayout& layout) {
    std::string container(layout.container);
    for (std::size_t at = 0; (at = container.find('.', at)) != std::string::npos; at += 2)
        container.replace(at, 1, "\\.");
    return std::regex(R"(model\.layers\.(0|[1-9]\d{0,8})\.)" + container +
                      R"(\.(0|[1-9]\d{0,8})\.(\w+)\.weight)");
}

namespace {

using Action = PlannedTensor::Action;
using ck::GgmlType;

[[noreturn]] void tensor_failure(const PlanInputs& in, const StoredTensor& t,
                                 const std::string& what) {
    throw ck::Error("tensor '" + t.info->name + "' " + what, in.checkpoint.file_of(t.shard),
                    t.info->source_offset, ck::support::tensor_subject(t.info->name));
}

bool stays_f32(const std::string& gguf_name, const ck::TensorInfo& info) {
    // The converter writes 1-D tensors, norms, the MoE router (ck::llama::converter_keeps_f32)
    // and anything that is not a `.weight` as F32 whatever the outtype (prepare_tensors).
    return ck::llama::converter_keeps_f32(gguf_name, info.ne.size()) !=
               ck::llama::ConverterF32::no ||
           !gguf_name.ends_with(".weight");
}

void check_float_type(const PlanInputs& in, const StoredTensor& t) {
    const auto type = static_cast<GgmlType>(t.info->type);
    if (type != GgmlType::f32 && type != GgmlType::f16 && type != GgmlType::bf16)
        tensor_failure(in, t,
                       "is " + std::string(ck::type_name(t.info->type)) +
                           "; a checkpoint's weights must be F32, F16 or BF16");
}

// One layer's expert tensors, collected until all 3 x n_expert are there (the converter holds
// them back the same way and writes the three stacks at that point).
class ExpertStacker {
  public:
    ExpertStacker(const PlanInputs& in, std::uint32_t n_expert)
        : in_(in), n_expert_(n_expert), pattern_(expert_pattern(*in.architecture.experts)) {}

    // False when `t` is not an expert tensor; else takes it, and appends the layer's stacks to
    // `out` once the layer is complete.
    bool take(const StoredTensor& t, std::vector<PlannedTensor>& out);
    void check_all_used() const;

  private:
    struct Layer {
        std::vector<std::optional<StoredTensor>> slots;  // part * n_expert + expert
        std::size_t filled = 0;
    };
    PlannedTensor stack(std::uint64_t layer, std::size_t part, const Layer& l) const;

    const PlanInputs& in_;
    std::uint32_t n_expert_;
    std::regex pattern_;
    std::map<std::uint64_t, Layer> layers_;
};

bool ExpertStacker::take(const StoredTensor& t, std::vector<PlannedTensor>& out) {
    std::smatch m;
    if (!std::regex_match(t.info->name, m, pattern_)) return false;
    const auto& parts = in_.architecture.experts->parts;
    std::size_t part = parts.size();
    for (std::size_t p = 0; p < parts.size(); ++p)
        if (m[3].str() == parts[p].hf) part = p;
    const std::uint64_t layer = std::stoull(m[1].str()), expert = std::stoull(m[2].str());
    if (part == parts.size()) tensor_failure(in_, t, "is not a part of an expert this model has");
    if (expert >= n_expert_)
        tensor_failure(in_, t,
                       "belongs to expert " + std::to_string(expert) + ", but config.json " +
                           "has " + std::to_string(n_expert_) + " experts");
    Layer& l = layers_[layer];
    l.slots.resize(3 * std::size_t{n_expert_});
    auto& slot = l.slots[part * n_expert_ + expert];
    if (slot) tensor_failure(in_, t, "is there twice");
    slot = t;
    if (++l.filled < l.slots.size()) return true;
    for (std::size_t p = 0; p < parts.size(); ++p) out.push_back(stack(layer, p, l));
    layers_.erase(layer);
    return true;
}

PlannedTensor ExpertStacker::stack(std::uint64_t layer, std::size_t part, const Layer& l) const {
    PlannedTensor planned;
    planned.action = Action::stack_experts;
    const StoredTensor& first = *l.slots[part * n_expert_];
    for (std::uint32_t e = 0; e < n_expert_; ++e) {
        const StoredTensor& t = *l.slots[part * n_expert_ + e];
        check_float_type(in_, t);
        if (t.info->type != first.info->type || t.info->ne != first.info->ne)
            tensor_failure(in_, t,
                           "differs in type or shape from expert 0 (" + first.info->shape_string() +
                               "): experts cannot be stacked");
        planned.stored.push_back(t);
    }
    planned.info = *first.info;
    planned.info.name = "blk." + std::to_string(layer) + "." +
                        std::string(in_.architecture.experts->parts[part].gguf) + ".weight";
    planned.info.ne.push_back(n_expert_);
    planned.info.nbytes = first.info->nbytes * n_expert_;
    return planned;
}

void ExpertStacker::check_all_used() const {
    if (layers_.empty()) return;
    const auto& [layer, l] = *layers_.begin();
    throw ck::Error("layer " + std::to_string(layer) + " has " + std::to_string(l.filled) +
                        " of its " + std::to_string(l.slots.size()) +
                        " expert tensors: the checkpoint is incomplete",
                    in_.checkpoint.file_of(0));
}

PlannedTensor plan_generated(const GeneratedTensor& g, std::size_t index) {
    PlannedTensor planned;
    planned.action = Action::generated;
    planned.generated = index;
    planned.info.name = g.name;
    planned.info.type = static_cast<std::uint32_t>(GgmlType::f32);
    planned.info.ne = {static_cast<std::int64_t>(g.values.size())};
    planned.info.nbytes = g.values.size() * 4;
    return planned;
}

// The plan of one mapped (not expert) tensor.
PlannedTensor plan_mapped(const PlanInputs& in, const StoredTensor& t, std::string name) {
    check_float_type(in, t);
    const Architecture& a = in.architecture;
    PlannedTensor planned{*t.info, Action::copy, {t}};
    planned.info.name = std::move(name);
    const std::string& n = planned.info.name;
    if (a.norm_plus_one && t.info->name.ends_with("norm.weight")) {
        planned.action = Action::shift_norm;
    } else if (stays_f32(n, *t.info) && t.info->type != static_cast<std::uint32_t>(GgmlType::f32)) {
        planned.action = Action::widen_to_f32;
    }
    if (planned.action != Action::copy) {
        planned.info.type = static_cast<std::uint32_t>(GgmlType::f32);
        planned.info.nbytes = t.info->elements() * 4;
    }
    const bool is_q = n.ends_with(".attn_q.weight"), is_k = n.ends_with(".attn_k.weight");
    if (a.permute_qk && (is_q || is_k)) {
        const std::uint32_t heads =
            in.hp.required_u32({"num_attention_heads", "n_head", "n_heads"});
        planned.action = Action::permute_rows;
        planned.heads =
            is_q ? heads : in.hp.u32({"num_key_value_heads", "n_kv_heads"}).value_or(heads);
        if (t.info->ne.size() != 2 || planned.heads == 0 ||
            t.info->ne[1] % (2 * planned.heads) != 0)
            tensor_failure(in, t,
                           "of shape " + t.info->shape_string() + " cannot be split into " +
                               std::to_string(planned.heads) + " heads of rotary pairs");
    }
    if (a.trim_embedding && n == "token_embd.weight" && in.vocabulary_rows &&
        t.info->ne.size() == 2 && static_cast<std::uint64_t>(t.info->ne[1]) > *in.vocabulary_rows) {
        planned.info.nbytes = t.info->nbytes / t.info->ne[1] * *in.vocabulary_rows;
        planned.info.ne[1] = static_cast<std::int64_t>(*in.vocabulary_rows);
    }
    return planned;
}

bool skipped(const Architecture& a, const std::string& name) {
    // Buffers transformers saves that llama.cpp recomputes, and Gemma 2's unused lm_head.
    return name.ends_with(".rotary_emb.inv_freq") || name.ends_with(".attention.masked_bias") ||
           name.ends_with(".attention.bias") || (a.skip_lm_head && name == "lm_head.weight");
}

}  // namespace

std::optional<std::string> llama_name(const Architecture& a, const std::string& name,
                                      std::uint32_t block_count) {
    const auto dot = name.rfind('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string stem = name.substr(0, dot), suffix = name.substr(dot);
    if (suffix != ".weight" && suffix != ".bias") return std::nullopt;
    for (const NameRule& r : model_names)
        if (stem == r.hf) return std::string(r.gguf) + suffix;
    static const std::regex layer(R"(model\.layers\.(0|[1-9]\d{0,8})\.(.+))");
    std::smatch m;
    if (!std::regex_match(stem, m, layer) || std::stoul(m[1].str()) >= block_count)
        return std::nullopt;
    for (const NameRule& r : a.layer_names)
        if (m[2].str() == r.hf) return "blk." + m[1].str() + "." + std::string(r.gguf) + suffix;
    return std::nullopt;
}

void permute_rows(const std::byte* in, std::byte* out, std::int64_t rows, std::size_t row_bytes,
                  std::int64_t heads) {
    const std::int64_t head_rows = rows / heads, half = head_rows / 2;
    for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < half; ++i)
            for (std::int64_t j = 0; j < 2; ++j) {
                const std::int64_t from = h * head_rows + j * half + i;
                const std::int64_t to = h * head_rows + i * 2 + j;
                std::memcpy(out + to * row_bytes, in + from * row_bytes, row_bytes);
            }
}

void shift_norm(const std::byte* in, std::byte* out, std::size_t n, ck::GgmlType type) {
    for (std::size_t i = 0; i < n; ++i) {
        float f;
        if (type == ck::GgmlType::f32) {
            f = ck::le::load<float>(in + 4 * i) + 1.0f;
        } else {
            const auto h = ck::le::load<std::uint16_t>(in + 2 * i);
            f = type == ck::GgmlType::bf16 ? ck::kernels::bf16_to_f32(h) + 1.0f
                                           : ck::kernels::f16_to_f32(ck::kernels::f32_to_f16(
                                                 ck::kernels::f16_to_f32(h) + 1.0f));
        }
        ck::le::store(out + 4 * i, f);
    }
}

std::vector<PlannedTensor> plan_tensors(const PlanInputs& in) {
    const Architecture& a = in.architecture;
    const std::uint32_t block_count = in.hp.required_u32(block_count_names());
    std::vector<PlannedTensor> plan;
    for (std::size_t i = 0; i < in.generated.tensors.size(); ++i)
        plan.push_back(plan_generated(in.generated.tensors[i], i));
    std::optional<ExpertStacker> experts;
    if (a.experts)
        if (const auto n = in.hp.u32({"num_local_experts", "num_experts"}); n && *n > 0)
            experts.emplace(in, *n);
    for (const StoredTensor& t : in.checkpoint.tensors()) {
        if (skipped(a, t.info->name) || (experts && experts->take(t, plan))) continue;
        auto name = llama_name(a, t.info->name, block_count);
        if (!name) tensor_failure(in, t, "has no llama.cpp name for " + std::string(a.arch));
        plan.push_back(plan_mapped(in, t, std::move(*name)));
    }
    if (experts) experts->check_all_used();
    std::unordered_set<std::string> names;
    for (const PlannedTensor& p : plan)
        if (!names.insert(p.info.name).second)
            throw ck::Error("two tensors become '" + p.info.name + "'",
                            in.checkpoint.file_of(p.stored.empty() ? 0 : p.stored[0].shard),
                            std::nullopt, ck::support::tensor_subject(p.info.name));
    return plan;
}

}  // namespace ckplugin::hf
