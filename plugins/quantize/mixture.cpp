// llama-quantize's type selection, rewritten from llama.cpp's src/llama-quant.cpp (the version
// with tensor categories and tensor_type_fallback, late 2025). Names in comments are llama.cpp's:
// tensor_allows_quantization, llama_tensor_get_type(_impl), tensor_type_fallback,
// tensor_requires_imatrix, use_more_bits, layer_info, has_tied_embeddings, weight_name_comparer.
//
// Every mixture llama-quantize lists but Q1_0, Q2_0, MXFP4_MOE and COPY, with and without an
// importance matrix, and --tensor-type patterns.
#include "mixture.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <regex>
#include <utility>

#include <boost/algorithm/string/case_conv.hpp>
#include <boost/algorithm/string/predicate.hpp>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/llama/hparams.hpp"
#include "ck/llama/tensors.hpp"
#include "ck/metadata.hpp"
#include "ck/support/tensor_io.hpp"

namespace ckplugin::quantize {
namespace {

using ck::GgmlType;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

using ck::llama::FileType;

// A named mixture: llama-quantize's spelling and the file type it writes (whose default type,
// llama_ftype_get_default_type, is in ck::llama's table).
struct MixEntry {
    std::string_view name;
    FileType file_type;
};

// In llama-quantize's listing order (QUANT_OPTIONS).
constexpr std::array<MixEntry, 32> mixes = {{
    {"Q4_0", FileType::q4_0},     {"Q4_1", FileType::q4_1},       {"Q5_0", FileType::q5_0},
    {"Q5_1", FileType::q5_1},     {"IQ2_XXS", FileType::iq2_xxs}, {"IQ2_XS", FileType::iq2_xs},
    {"IQ2_S", FileType::iq2_s},   {"IQ2_M", FileType::iq2_m},     {"IQ1_S", FileType::iq1_s},
    {"IQ1_M", FileType::iq1_m},   {"TQ1_0", FileType::tq1_0},     {"TQ2_0", FileType::tq2_0},
    {"Q2_K", FileType::q2_k},     {"Q2_K_S", FileType::q2_k_s},   {"IQ3_XXS", FileType::iq3_xxs},
    {"IQ3_S", FileType::iq3_s},   {"IQ3_M", FileType::iq3_m},     {"IQ3_XS", FileType::iq3_xs},
    {"Q3_K_S", FileType::q3_k_s}, {"Q3_K_M", FileType::q3_k_m},   {"Q3_K_L", FileType::q3_k_l},
    {"IQ4_NL", FileType::iq4_nl}, {"IQ4_XS", FileType::iq4_xs},   {"Q4_K_S", FileType::q4_k_s},
    {"Q4_K_M", FileType::q4_k_m}, {"Q5_K_S", FileType::q5_k_s},   {"Q5_K_M", FileType::q5_k_m},
    {"Q6_K", FileType::q6_k},     {"Q8_0", FileType::q8_0},       {"F16", FileType::f16},
    {"BF16", FileType::bf16},     {"F32", FileType::all_f32},
}};

std::uint32_t default_type_of(FileType file_type) {
    return ck::llama::find_file_type(static_cast<std::uint32_t>(file_type))->default_type;
}

// llama-quantize's aliases.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> aliases = {{
    {"Q3_K", "Q3_K_M"},
    {"Q4_K", "Q4_K_M"},
    {"Q5_K", "Q5_K_M"},
}};

bool contains(std::string_view haystack, std::string_view needle) {
    return haystack.find(needle) != std::string_view::npos;
}

// "Q4_K", "IQ4_NL", "F16": ggml's name in capitals, as llama-quantize prints mixtures.
std::string shown(std::uint32_t type) {
    return boost::algorithm::to_upper_copy(std::string(ck::type_name(type)));
}

std::uint32_t block_size(std::uint32_t type) {
    const ck::TypeInfo* info = ck::find_type(type);
    return info && info->block_size ? info->block_size : 1;
}

bool is_quantized_type(std::uint32_t type) {
    const ck::TypeInfo* info = ck::find_type(type);
    return info && info->quantized;
}

using ck::llama::layer_of;
using ck::llama::n_dims;

// use_more_bits: the first and last eighth of the layers, and every third one in between.
bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 ||
           (i_layer - n_layers / 8) % 3 == 2;
}

// tensor_get_category: broad roles by name, the same for every architecture.
enum class Category {
    token_embd,
    attn_q,
    attn_k,
    attn_v,
    attn_qkv,
    attn_kv_b,
    attn_output,
    ffn_up,
    ffn_gate,
    ffn_down,
    output,
    other,
};

Category category_of(std::string_view name) {
    if (name == "output.weight") return Category::output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight")
        return Category::token_embd;
    if (contains(name, "attn_qkv.weight")) return Category::attn_qkv;
    if (contains(name, "attn_kv_b.weight")) return Category::attn_kv_b;
    if (contains(name, "attn_v.weight")) return Category::attn_v;
    if (contains(name, "attn_k.weight")) return Category::attn_k;
    if (contains(name, "attn_q.weight")) return Category::attn_q;
    if (contains(name, "attn_output.weight")) return Category::attn_output;
    if (contains(name, "ffn_up")) return Category::ffn_up;
    if (contains(name, "ffn_gate")) return Category::ffn_gate;
    if (contains(name, "ffn_down")) return Category::ffn_down;
    return Category::other;
}

std::string_view label(Category c) {
    switch (c) {
        case Category::token_embd:
            return "token_embd";
        case Category::attn_q:
            return "attn_q";
        case Category::attn_k:
            return "attn_k";
        case Category::attn_v:
            return "attn_v";
        case Category::attn_qkv:
            return "attn_qkv";
        case Category::attn_kv_b:
            return "attn_kv_b";
        case Category::attn_output:
            return "attn_output";
        case Category::ffn_up:
            return "ffn_up";
        case Category::ffn_gate:
            return "ffn_gate";
        case Category::ffn_down:
            return "ffn_down";
        case Category::output:
            return "output.weight";
        case Category::other:
            return "other";
    }
    return "other";
}

// category_is_attn_v: attn_v, and the fused tensors that hold it (attn_qkv, attn_kv_b). Older
// llama.cpp gave attn_qkv rules of its own; since the categories it shares attn_v's.
bool is_attn_v_like(Category c) {
    return c == Category::attn_v || c == Category::attn_qkv || c == Category::attn_kv_b;
}

// tensor_allows_quantization, name part: substrings of tensors llama.cpp never quantizes, with
// what they are (for the rule text).
struct Excluded {
    std::string_view part;
    std::string_view what;
};
constexpr std::array<Excluded, 35> excluded = {{
    {"_norm.weight", "norm"},
    {"ffn_gate_inp.weight", "expert router"},
    {"ffn_gate_tid2eid.weight", "expert routing table"},
    {"altup", "altup tensor"},
    {"laurel", "laurel tensor"},
    {"per_layer_model_proj", "per-layer model projection"},
    {"ssm_conv1d", "conv1d weight"},
    {"shortconv.conv.weight", "short convolution"},
    {"indexer.k_proj.weight", "indexer projection"},
    {"indexer.q_proj.weight", "indexer projection"},
    {"time_mix_first.weight", "RWKV time-mix weight"},
    {"time_mix_w0.weight", "RWKV time-mix weight"},
    {"time_mix_w1.weight", "RWKV time-mix weight"},
    {"time_mix_w2.weight", "RWKV time-mix weight"},
    {"time_mix_v0.weight", "RWKV time-mix weight"},
    {"time_mix_v1.weight", "RWKV time-mix weight"},
    {"time_mix_v2.weight", "RWKV time-mix weight"},
    {"time_mix_a0.weight", "RWKV time-mix weight"},
    {"time_mix_a1.weight", "RWKV time-mix weight"},
    {"time_mix_a2.weight", "RWKV time-mix weight"},
    {"time_mix_g1.weight", "RWKV time-mix weight"},
    {"time_mix_g2.weight", "RWKV time-mix weight"},
    {"time_mix_decay_w1.weight", "RWKV time-mix weight"},
    {"time_mix_decay_w2.weight", "RWKV time-mix weight"},
    {"time_mix_lerp_fused.weight", "RWKV time-mix weight"},
    {"attn_rel_b.weight", "relative position bias"},
    {".position_embd", "position embedding"},
    {"sam.pos_embd", "position embedding"},
    {".rel_pos", "relative position table"},
    {".patch_embd", "patch embedding"},
    {".patch_merger", "patch merger"},
    {"sam.neck.", "SAM neck tensor"},
    {"sam.net_", "SAM tensor"},
    {"a.rvq.codebook", "audio codebook"},
    {"mm.a.code_embd", "audio code embedding"},
}};

// Why llama-quantize copies this tensor as it is, or nullopt when it may be quantized.
std::optional<std::string> kept_as_is(const ck::TensorInfo& t, const MixSettings& settings) {
    std::optional<std::string> why = not_quantizable(t);
    if (why || !settings.leave_output || t.name != "output.weight") return why;
    return std::string("output.weight: copied (--leave-output-tensor)");
}

// The first step of tensor_type_fallback: a 256-element type's 32-element replacement; a type
// of 32 or fewer elements has no smaller block and stays (F16 comes next); nullopt for a
// larger block llama.cpp lists no replacement for.
std::optional<std::uint32_t> smaller_block_type(std::uint32_t type) {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::iq1_s:
        case GgmlType::iq1_m:
        case GgmlType::iq2_xxs:
        case GgmlType::iq2_xs:
        case GgmlType::iq2_s:
        case GgmlType::iq3_xxs:
        case GgmlType::iq3_s:
        case GgmlType::iq4_xs:
            return id(GgmlType::iq4_nl);
        case GgmlType::q2_0:
        case GgmlType::q2_k:
        case GgmlType::q3_k:
        case GgmlType::tq1_0:
        case GgmlType::tq2_0:
            return id(GgmlType::q4_0);
        case GgmlType::q4_k:
            return id(GgmlType::q5_0);
        case GgmlType::q5_k:
            return id(GgmlType::q5_1);
        case GgmlType::q6_k:
            return id(GgmlType::q8_0);
        default:
            if (block_size(type) > 32) return std::nullopt;
            return type;
    }
}

struct Pick {
    std::uint32_t type;
    std::string rule;
};

Pick picked(GgmlType type, std::string rule) {
    return {id(type), std::move(rule)};
}

// The mixtures llama.cpp gives rules of their own for attn_v, attn_k, ffn_down and attn_output:
// the IQ1 and IQ2 ones (2.7 bits per weight or fewer), which lift only those few tensors, with
// types of their own.
bool very_low_bit(FileType f) {
    return f == FileType::iq2_xxs || f == FileType::iq2_xs || f == FileType::iq1_s ||
           f == FileType::iq2_s || f == FileType::iq2_m || f == FileType::iq1_m;
}

// " (n_gqa 5 >= 4)": the grouped-query ratio a rule looked at.
std::string gqa_text(std::uint32_t gqa) {
    return " (n_gqa " + std::to_string(gqa) + (gqa >= 4 ? " >= 4)" : " < 4)");
}

// A --tensor-type pattern, compiled once (as llama.cpp's quantize_state_impl does).
struct CompiledOverride {
    std::regex regex;
    const TensorTypeOverride* given;
};

class Planner {
  public:
    Planner(const ck::ModelHeader& header, const MixSettings& settings)
        : header_(header), settings_(settings) {
        check_override(settings.output_type, "--output-tensor-type");
        check_override(settings.embd_type, "--token-embedding-type");
        compile_tensor_types();
        default_type_ = settings.mix.default_type;
        const bool known = std::any_of(mixes.begin(), mixes.end(), [&](const MixEntry& m) {
            return static_cast<std::uint32_t>(m.file_type) == settings.mix.file_type &&
                   default_type_of(m.file_type) == default_type_;
        });
        if (!known)
            throw ck::usage_error("unknown mixture '" + settings.mix.name + "' (file type " +
                                  std::to_string(settings.mix.file_type) + ", default type " +
                                  std::string(ck::type_name(default_type_)) + ")");
        ftype_ = static_cast<FileType>(settings.mix.file_type);
        if (is_quantized_type(default_type_) && !settings.pure) read_model();
        for (const ck::TensorInfo& t : header.tensors) {
            const Category c = category_of(t.name);
            if (is_attn_v_like(c)) ++n_attention_wv_;
            if (c == Category::output) tied_embeddings_ = false;
        }
    }

    MixPlan plan() {
        MixPlan result;
        result.file_type = settings_.mix.file_type;
        result.tensors.resize(header_.tensors.size());
        std::vector<std::size_t> order;
        if (settings_.input_order) {
            order.resize(header_.tensors.size());
            std::iota(order.begin(), order.end(), std::size_t{0});
        } else {
            order = ck::llama::loader_order(header_);
        }
        for (std::size_t i : order) result.tensors[i] = choose(header_.tensors[i]);
        return result;
    }

  private:
    static void check_override(const std::optional<std::uint32_t>& type,
                               const std::string& option) {
        if (!type) return;
        const ck::TypeInfo* info = ck::find_type(*type);
        if (!info || info->removed || !info->dequantizable)
            throw ck::usage_error(option + ": " + std::string(ck::type_name(*type)) +
                                  " is not a type llama-quantize can store");
    }

    void compile_tensor_types() {
        for (const TensorTypeOverride& o : settings_.tensor_types) {
            const std::string option = "--tensor-type " + o.pattern;
            check_override(o.type, option);
            try {
                tensor_types_.push_back({std::regex(o.pattern), &o});
            } catch (const std::regex_error& e) {
                throw ck::usage_error(option + ": not a regular expression (" + e.what() + ")");
            }
        }
    }

    // The first --tensor-type pattern that finds `name`, or null.
    const TensorTypeOverride* tensor_type_for(const std::string& name) const {
        for (const CompiledOverride& o : tensor_types_)
            if (std::regex_search(name, o.regex)) return o.given;
        return nullptr;
    }

    std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }

    // The hyperparameters llama_model_quantize_impl loads (llama_hparams); a per-layer head
    // count counts as its layer 0, as llama.cpp's n_head(0) reads it.
    void read_model() {
        const ck::llama::Hyperparameters hp =
            ck::llama::read_hyperparameters(header_.metadata, header_.source);
        if (!hp.arch_stated)
            throw ck::key_error("the mixture rules need the model's architecture",
                                "general.architecture", header_.source);
        arch_ = hp.arch;
        n_layer_ = hp.block_count;
        if (!n_layer_)
            throw ck::key_error("the mixture rules need the layer count", key("block_count"),
                                header_.source);
        if (hp.head_count) n_head_ = hp.head_count->first();
        if (hp.head_count_kv) n_head_kv_ = hp.head_count_kv->first();
        n_expert_ = hp.expert_count;
        falcon_ = arch_ == "falcon";
    }

    std::uint32_t n_head(const ck::TensorInfo& t, std::string_view why) const {
        if (!n_head_)
            throw ck::key_error("choosing the type of " + t.name + " (" + std::string(why) +
                                    ") needs the attention head count",
                                key("attention.head_count"), header_.source);
        return *n_head_;
    }
    std::uint32_t n_head_kv(const ck::TensorInfo& t, std::string_view why) const {
        return n_head_kv_ ? *n_head_kv_ : n_head(t, why);
    }
    // llama_hparams::n_gqa() of layer 0.
    std::uint32_t n_gqa(const ck::TensorInfo& t) const {
        const std::uint32_t kv = n_head_kv(t, "n_gqa");
        return kv == 0 ? 0 : n_head(t, "n_gqa") / kv;
    }
    // model.type == LLM_TYPE_70B, as the loaders of these architectures set it.
    bool is_70b(const ck::TensorInfo& t) const {
        if (*n_layer_ != 80) return false;
        if (arch_ == "llama" || arch_ == "mistral")
            return n_expert_ != 8 && n_head(t, "70B check") != n_head_kv(t, "70B check");
        return arch_ == "qwen2" || arch_ == "deci";
    }

    // layer_info: the ffn tensors' layer is their running count, except with experts, where
    // llama.cpp reads it from the name.
    std::pair<int, int> layer_info(int counter, const ck::TensorInfo& t) const {
        const int n_layer = static_cast<int>(*n_layer_);
        if (std::max<std::uint32_t>(1, n_expert_) <= 1) return {counter, n_layer};
        const std::optional<int> layer = layer_of(t.name);
        if (!layer)
            throw ck::tensor_error(
                "cannot tell the layer of this tensor (a model with experts needs "
                "names blk.N.*)",
                t.name, header_.source);
        if (*layer < 0 || *layer >= n_layer)
            throw ck::tensor_error("layer " + std::to_string(*layer) + " is outside [0, " +
                                       std::to_string(n_layer) + ")",
                                   t.name, header_.source);
        return {*layer, n_layer};
    }

    // "layer 3 of 32": the position use_more_bits looked at.
    static std::string where(int i, int n) {
        return "layer " + std::to_string(i) + " of " + std::to_string(n);
    }

    // " for IQ2_XXS": the mixture a rule belongs to.
    std::string for_mix() const { return " for " + settings_.mix.name; }

    TensorChoice choose(const ck::TensorInfo& t) {
        if (auto why = kept_as_is(t, settings_)) return {t.type, false, *why};
        TensorChoice choice = choose_quantizable(t, category_of(t.name));
        choice.requires_imatrix = requires_imatrix(t.name, choice.type, settings_.mix.file_type);
        return choice;
    }

    // llama_tensor_get_type.
    TensorChoice choose_quantizable(const ck::TensorInfo& t, Category c) {
        // The options win over everything, fallback included; a --tensor-type pattern that
        // names per_layer_token_embd.weight wins over --token-embedding-type, since that table
        // is large and separate from token_embd.weight.
        if (settings_.embd_type && c == Category::token_embd &&
            !(t.name == "per_layer_token_embd.weight" && tensor_type_for(t.name)))
            return finish(
                t,
                {*settings_.embd_type, std::string(label(c)) + ": " + shown(*settings_.embd_type) +
                                           " (--token-embedding-type)"},
                "--token-embedding-type");
        if (settings_.output_type && c == Category::output)
            return finish(
                t,
                {*settings_.output_type,
                 "output.weight: " + shown(*settings_.output_type) + " (--output-tensor-type)"},
                "--output-tensor-type");
        if (!is_quantized_type(default_type_))
            return finish(
                t,
                {default_type_, settings_.mix.name + ": every 2-D weight " + shown(default_type_)},
                nullptr);
        Pick pick;
        if (const TensorTypeOverride* o = tensor_type_for(t.name))
            pick = {o->type, "--tensor-type " + o->pattern + " -> " + shown(o->type)};
        else if (settings_.pure)
            pick = {default_type_, "--pure: " + shown(default_type_)};
        else
            pick = mixture_rule(t, c);
        pick = fallback(t, std::move(pick));
        return finish(t, std::move(pick), nullptr);
    }

    // The chosen type; an override whose block does not divide the rows cannot be stored.
    TensorChoice finish(const ck::TensorInfo& t, Pick pick, const char* option) const {
        if (option && !t.ne.empty() && t.ne[0] % block_size(pick.type) != 0)
            throw ck::tensor_error(std::string(option) + " " + shown(pick.type) + ": row length " +
                                       std::to_string(t.ne[0]) +
                                       " is not a multiple of its block of " +
                                       std::to_string(block_size(pick.type)),
                                   t.name, header_.source);
        const bool quantize = pick.type != t.type;
        if (!quantize) pick.rule += " (input is already " + shown(t.type) + ": copied)";
        return {pick.type, quantize, std::move(pick.rule)};
    }

    // tensor_type_fallback, with the rule text saying what replaced what.
    Pick fallback(const ck::TensorInfo& t, Pick pick) const {
        const std::int64_t ncols = t.ne.empty() ? 1 : t.ne[0];
        if (ncols % block_size(pick.type) == 0) return pick;
        const std::uint32_t to = fallback_type_or_refuse(t, pick.type, header_.source);
        return {to, pick.rule + "; fallback: " + fallback_reason(pick.type, ncols, to)};
    }

    // llama_tensor_get_type_impl for the supported mixtures.
    Pick mixture_rule(const ck::TensorInfo& t, Category c) {
        const std::string name(label(c));
        const Pick keep{default_type_, name + ": " + shown(default_type_) + " (mixture default)"};
        // output.weight, and token_embd.weight when it doubles as the output (tied embeddings).
        if (c == Category::output || (tied_embeddings_ && c == Category::token_embd))
            return output_rule(t, c);
        if (c == Category::token_embd) return token_embd_rule(keep);
        if (very_low_bit(ftype_)) return very_low_bit_rule(t, c, name, keep);
        if (is_attn_v_like(c)) return attn_v_rule(t, name, keep);
        if (c == Category::attn_k) {
            if (n_expert_ == 8) return picked(GgmlType::q8_0, name + ": Q8_0 (8 experts)");
            return iq3_attn_q_k_rule(name, keep);
        }
        if (c == Category::attn_q) return iq3_attn_q_k_rule(name, keep);
        if (c == Category::ffn_down) {
            const auto [i, n] = layer_info(i_ffn_down_++, t);
            return ffn_down_rule(name, i, n, keep);
        }
        if (c == Category::attn_output) return attn_output_rule(name, keep);
        if (c == Category::ffn_gate || c == Category::ffn_up) {
            int& counter = c == Category::ffn_gate ? i_ffn_gate_ : i_ffn_up_;
            const auto [i, n] = layer_info(counter++, t);
            // IQ3_XS lowers the middle three quarters of the layers.
            if (ftype_ == FileType::iq3_xs && i >= n / 8 && i < 7 * n / 8)
                return picked(GgmlType::iq3_xxs,
                              name + ": IQ3_XXS for IQ3_XS (" + where(i, n) + ", middle layers)");
        }
        return keep;
    }

    Pick output_rule(const ck::TensorInfo& t, Category c) const {
        const std::uint32_t def = default_type_;
        const std::string who =
            c == Category::output ? "output.weight" : "token_embd.weight (tied to the output)";
        if (settings_.output_type)
            return {*settings_.output_type,
                    who + ": " + shown(*settings_.output_type) + " (--output-tensor-type)"};
        const std::int64_t nx = t.ne.empty() ? 1 : t.ne[0];
        if (falcon_) return picked(GgmlType::q8_0, who + ": Q8_0 (falcon)");
        if (nx % block_size(def) != 0)
            return picked(GgmlType::q8_0, who + ": Q8_0 (row length " + std::to_string(nx) +
                                              " is not a multiple of " + shown(def) +
                                              "'s block of " + std::to_string(block_size(def)) +
                                              ")");
        if (very_low_bit(ftype_) || ftype_ == FileType::iq3_xxs)
            return picked(GgmlType::q5_k, who + ": Q5_K" + for_mix());
        if (def != id(GgmlType::q8_0)) return picked(GgmlType::q6_k, who + ": Q6_K");
        return {def, who + ": Q8_0 (mixture default)"};
    }

    Pick token_embd_rule(const Pick& keep) const {
        switch (ftype_) {
            case FileType::iq2_xxs:
            case FileType::iq2_xs:
            case FileType::iq1_s:
            case FileType::iq1_m:
                return picked(GgmlType::q2_k, "token_embd: Q2_K" + for_mix());
            case FileType::iq2_s:
            case FileType::iq2_m:
            case FileType::iq3_xxs:
                return picked(GgmlType::iq3_s, "token_embd: IQ3_S" + for_mix());
            case FileType::tq1_0:
            case FileType::tq2_0:
                return picked(GgmlType::q4_k, "token_embd: Q4_K (ternary mixture)");
            default:
                return keep;
        }
    }

    // The IQ1/IQ2 mixtures' own rules. Their ffn_down goes by its running count alone (experts
    // included), and attn_v gets neither the 70B nor the 8-expert lift.
    Pick very_low_bit_rule(const ck::TensorInfo& t, Category c, const std::string& name,
                           const Pick& keep) {
        const bool iq2_s_or_m = ftype_ == FileType::iq2_s || ftype_ == FileType::iq2_m;
        const GgmlType lifted = iq2_s_or_m ? GgmlType::iq3_s : GgmlType::q2_k;
        const std::string lifted_name = shown(id(lifted));
        if (is_attn_v_like(c)) {
            ++i_attention_wv_;
            if (std::optional<Pick> by_gqa = lift_with_gqa(t, name, GgmlType::q4_k)) return *by_gqa;
            if (n_expert_ >= 4)
                return picked(GgmlType::q4_k, name + ": Q4_K" + for_mix() + " (" +
                                                  std::to_string(n_expert_) + " experts >= 4)");
            return picked(lifted, name + ": " + lifted_name + for_mix() + gqa_text(n_gqa(t)));
        }
        if (c == Category::attn_k && n_expert_ == 8)
            return picked(GgmlType::q4_k, name + ": Q4_K (8 experts)");
        if (c == Category::ffn_down) {
            const int i = i_ffn_down_++, n = static_cast<int>(*n_layer_);
            if (i < n / 8)
                return picked(lifted, name + ": " + lifted_name + " in the first eighth (" +
                                          where(i, n) + ")");
            return keep;
        }
        if (c == Category::attn_output) {
            if (n_expert_ == 8) return picked(GgmlType::q5_k, name + ": Q5_K (8 experts)");
            if (ftype_ == FileType::iq1_s || ftype_ == FileType::iq1_m)
                return picked(GgmlType::iq2_xxs, name + ": IQ2_XXS" + for_mix());
            if (iq2_s_or_m) return picked(GgmlType::iq3_s, name + ": IQ3_S" + for_mix());
        }
        return keep;
    }

    Pick attn_v_rule(const ck::TensorInfo& t, const std::string& name, const Pick& keep) {
        const int i = i_attention_wv_++, n = n_attention_wv_;
        Pick p = attn_v_by_mixture(t, name, i, n, keep);
        // LLM_TYPE_70B: attn_v is 8x smaller than attn_q there, so more bits cost little.
        if ((p.type == id(GgmlType::q3_k) || p.type == id(GgmlType::q4_k)) && is_70b(t))
            p = picked(GgmlType::q5_k, p.rule + "; 70B model -> Q5_K");
        if (n_expert_ == 8) p = picked(GgmlType::q8_0, name + ": Q8_0 (8 experts)");
        return p;
    }

    Pick attn_v_by_mixture(const ck::TensorInfo& t, const std::string& name, int i, int n,
                           const Pick& keep) const {
        switch (ftype_) {
            case FileType::q2_k: {
                const std::uint32_t gqa = n_gqa(t);
                return picked(gqa >= 4 ? GgmlType::q4_k : GgmlType::q3_k,
                              name + (gqa >= 4 ? ": Q4_K" : ": Q3_K") + for_mix() + gqa_text(gqa));
            }
            case FileType::q2_k_s:
            case FileType::iq3_xs:
            case FileType::iq3_s:
                return lift_with_gqa(t, name, GgmlType::q4_k).value_or(keep);
            case FileType::iq3_xxs:
                return iq3_xxs_attn_v_rule(t, name, keep);
            case FileType::iq3_m:
                return picked(GgmlType::q4_k, name + ": Q4_K" + for_mix());
            case FileType::q3_k_m:
                return i < 2 ? picked(GgmlType::q5_k,
                                      name + ": Q5_K in the first two (" + where(i, n) + ")")
                             : picked(GgmlType::q4_k, name + ": Q4_K for Q3_K_M");
            case FileType::q3_k_l:
                return picked(GgmlType::q5_k, name + ": Q5_K for Q3_K_L");
            case FileType::iq4_nl:
            case FileType::iq4_xs:
                return lift_with_gqa(t, name, GgmlType::q5_k).value_or(keep);
            case FileType::q4_k_m:
            case FileType::q5_k_m:
                if (use_more_bits(i, n))
                    return picked(GgmlType::q6_k, name + ": more bits in " + where(i, n) +
                                                      " (use_more_bits) -> Q6_K");
                return keep;
            case FileType::q4_k_s:
                if (i < 4)
                    return picked(GgmlType::q5_k,
                                  name + ": Q5_K in the first four (" + where(i, n) + ")");
                return keep;
            default:
                return keep;
        }
    }

    // attn_v's type `to` when n_gqa >= 4 (several query heads share each of its rows, so its
    // error counts several times); nullopt otherwise.
    std::optional<Pick> lift_with_gqa(const ck::TensorInfo& t, const std::string& name,
                                      GgmlType to) const {
        const std::uint32_t gqa = n_gqa(t);
        if (gqa < 4) return std::nullopt;
        return picked(to, name + ": " + shown(id(to)) + for_mix() + gqa_text(gqa));
    }

    // IQ3_XXS's attn_v: Q4_K with grouped-query attention; otherwise IQ3_XXS needs an importance
    // matrix to hold the values well, and IQ3_S stands in without one.
    Pick iq3_xxs_attn_v_rule(const ck::TensorInfo& t, const std::string& name,
                             const Pick& keep) const {
        if (std::optional<Pick> lifted = lift_with_gqa(t, name, GgmlType::q4_k)) return *lifted;
        if (settings_.has_imatrix)
            return {keep.type, name + ": IQ3_XXS (mixture default, with an importance matrix)"};
        return picked(GgmlType::iq3_s, name + ": IQ3_S for IQ3_XXS without an importance matrix");
    }

    // attn_q and attn_k in the two IQ3 mixtures that lower them.
    Pick iq3_attn_q_k_rule(const std::string& name, const Pick& keep) const {
        if (ftype_ == FileType::iq3_xs)
            return picked(GgmlType::iq3_xxs, name + ": IQ3_XXS for IQ3_XS");
        if (ftype_ == FileType::iq3_xxs)
            return picked(GgmlType::iq2_s, name + ": IQ2_S for IQ3_XXS");
        return keep;
    }

    Pick ffn_down_rule(const std::string& name, int i, int n, const Pick& keep) const {
        const bool more = use_more_bits(i, n);
        switch (ftype_) {
            case FileType::q2_k:
                return picked(GgmlType::q3_k, name + ": Q3_K for Q2_K");
            case FileType::q3_k_m:
                if (i < n / 16)
                    return picked(GgmlType::q5_k,
                                  name + ": Q5_K in the first sixteenth (" + where(i, n) + ")");
                if (!falcon_) return picked(GgmlType::q4_k, name + ": Q4_K for Q3_K_M");
                return more ? picked(GgmlType::q4_k, name + ": more bits in " + where(i, n) +
                                                         " (use_more_bits) -> Q4_K")
                            : picked(GgmlType::q3_k, name + ": Q3_K (falcon)");
            case FileType::q3_k_l:
                return falcon_ ? picked(GgmlType::q4_k, name + ": Q4_K for Q3_K_L (falcon)")
                               : picked(GgmlType::q5_k, name + ": Q5_K for Q3_K_L");
            case FileType::q4_k_m:
                if (falcon_) {
                    if (i < n / 16)
                        return picked(GgmlType::q6_k, name + ": Q6_K in the first sixteenth (" +
                                                          where(i, n) + ", falcon)");
                    if (more)
                        return picked(GgmlType::q5_k, name + ": more bits in " + where(i, n) +
                                                          " (use_more_bits, falcon) -> Q5_K");
                    return picked(GgmlType::q4_k, name + ": Q4_K (falcon)");
                }
                if (more)
                    return picked(GgmlType::q6_k, name + ": more bits in " + where(i, n) +
                                                      " (use_more_bits) -> Q6_K");
                return keep;
            case FileType::q5_k_m:
                if (more)
                    return picked(GgmlType::q6_k, name + ": more bits in " + where(i, n) +
                                                      " (use_more_bits) -> Q6_K");
                return keep;
            case FileType::q4_k_s:
                if (!falcon_ && i < n / 8)
                    return picked(GgmlType::q5_k,
                                  name + ": Q5_K in the first eighth (" + where(i, n) + ")");
                return keep;
            default:
                return ffn_down_first_eighth_rule(name, i, n, keep);
        }
    }

    // The mixtures that change only the first eighth of ffn_down (IQ3_M also its use_more_bits
    // layers with 8 experts), several of them depending on the importance matrix.
    Pick ffn_down_first_eighth_rule(const std::string& name, int i, int n, const Pick& keep) const {
        const bool first = i < n / 8;
        const std::string at = " (" + where(i, n) + ")";
        switch (ftype_) {
            case FileType::q2_k_s:
                if (first) return picked(GgmlType::q4_k, name + ": Q4_K in the first eighth" + at);
                return keep;
            case FileType::iq3_xxs:
                if (settings_.has_imatrix)
                    return {keep.type,
                            name + ": IQ3_XXS (mixture default, with an importance matrix)"};
                return first ? picked(GgmlType::q4_k, name + ": Q4_K in the first eighth" + at +
                                                          ", no importance matrix")
                             : picked(GgmlType::q3_k,
                                      name + ": Q3_K for IQ3_XXS without an importance matrix");
            case FileType::iq3_m:
                if (first) return picked(GgmlType::q4_k, name + ": Q4_K in the first eighth" + at);
                if (n_expert_ == 8 && use_more_bits(i, n))
                    return picked(GgmlType::q4_k, name + ": more bits in " + where(i, n) +
                                                      " (use_more_bits, 8 experts) -> Q4_K");
                return keep;
            case FileType::iq4_nl:
            case FileType::iq4_xs:
                // With an importance matrix llama.cpp trusts the first layers to the default.
                if (first && !settings_.has_imatrix)
                    return picked(GgmlType::q5_k,
                                  name + ": Q5_K in the first eighth (" + where(i, n) + ")");
                return keep;
            case FileType::q4_0:
            case FileType::q5_0:
                // Guards the first layers against outliers; without an importance matrix
                // Q4_1/Q5_1 do worse there, and the output stays what it was before imatrices.
                if (first && settings_.has_imatrix) {
                    const GgmlType to = ftype_ == FileType::q4_0 ? GgmlType::q4_1 : GgmlType::q5_1;
                    return picked(to, name + ": " + shown(id(to)) + " in the first eighth" + at +
                                          " with an importance matrix");
                }
                return keep;
            default:
                return keep;
        }
    }

    Pick attn_output_rule(const std::string& name, const Pick& keep) const {
        if (falcon_) {
            if (ftype_ == FileType::q3_k_l)
                return picked(GgmlType::q4_k, name + ": Q4_K for Q3_K_L (falcon)");
            return keep;
        }
        if (n_expert_ == 8) {
            switch (ftype_) {
                case FileType::q2_k:
                case FileType::iq3_xs:
                case FileType::iq3_xxs:
                case FileType::q3_k_s:
                case FileType::q3_k_m:
                case FileType::iq4_nl:
                case FileType::q4_k_s:
                case FileType::q4_k_m:
                case FileType::iq3_s:
                case FileType::iq3_m:
                case FileType::iq4_xs:
                    return picked(GgmlType::q5_k, name + ": Q5_K (8 experts)");
                default:
                    return keep;
            }
        }
        switch (ftype_) {
            case FileType::q2_k:
                return picked(GgmlType::q3_k, name + ": Q3_K for Q2_K");
            case FileType::iq3_xxs:
                return picked(GgmlType::iq3_s, name + ": IQ3_S for IQ3_XXS");
            case FileType::q3_k_m:
                return picked(GgmlType::q4_k, name + ": Q4_K for Q3_K_M");
            case FileType::q3_k_l:
                return picked(GgmlType::q5_k, name + ": Q5_K for Q3_K_L");
            case FileType::iq3_m:
                return picked(GgmlType::q4_k, name + ": Q4_K for IQ3_M");
            default:
                return keep;
        }
    }

    const ck::ModelHeader& header_;
    const MixSettings& settings_;
    std::vector<CompiledOverride> tensor_types_;
    std::uint32_t default_type_ = 0;
    FileType ftype_ = FileType::all_f32;

    // Model facts (llama_hparams), read only when the mixture rules run.
    std::string arch_;
    std::optional<std::uint32_t> n_layer_, n_head_, n_head_kv_;
    std::uint32_t n_expert_ = 0;
    bool falcon_ = false;

    // quantize_state_impl
    bool tied_embeddings_ = true;  // until an output.weight is seen
    int n_attention_wv_ = 0;
    int i_attention_wv_ = 0;
    int i_ffn_down_ = 0;
    int i_ffn_gate_ = 0;
    int i_ffn_up_ = 0;
};

}  // namespace

std::optional<MixInfo> find_mix_by_number(std::string_view number) {
    for (const MixEntry& m : mixes)
        if (number == std::to_string(static_cast<std::uint32_t>(m.file_type)))
            return MixInfo{std::string(m.name), default_type_of(m.file_type),
                           static_cast<std::uint32_t>(m.file_type)};
    return std::nullopt;
}

std::optional<MixInfo> find_mix(std::string_view name) {
    for (const auto& [alias, full] : aliases) {
        if (boost::algorithm::iequals(name, alias)) name = full;
    }
    for (const MixEntry& m : mixes) {
        if (boost::algorithm::iequals(name, m.name))
            return MixInfo{std::string(m.name), default_type_of(m.file_type),
                           static_cast<std::uint32_t>(m.file_type)};
    }
    return std::nullopt;
}

std::vector<std::string> mix_names() {
    std::vector<std::string> names;
    names.reserve(mixes.size());
    for (const MixEntry& m : mixes) names.emplace_back(m.name);
    return names;
}

std::optional<std::string> not_quantizable(const ck::TensorInfo& t) {
    if (n_dims(t) < 2) return std::string("1-D tensor: copied");
    const std::string& name = t.name;
    if (!name.ends_with("weight")) return std::string("not a weight: copied");
    for (const Excluded& e : excluded) {
        if (contains(name, e.part)) return std::string(e.what) + ": copied";
    }
    // LLM_TENSOR_POS_EMBD and LLM_TENSOR_TOKEN_TYPES (BERT), whole names.
    if (name == "position_embd.weight") return std::string("position embedding: copied");
    if (name == "token_types.weight") return std::string("token types: copied");
    return std::nullopt;
}

std::optional<std::uint32_t> fallback_type(std::uint32_t type, std::int64_t row_length) {
    if (row_length % block_size(type) == 0) return type;
    const std::optional<std::uint32_t> smaller = smaller_block_type(type);
    if (!smaller) return std::nullopt;
    // "Most likely this tensor's first dimension is not divisible by 32": F16, which takes any
    // row length.
    if (row_length % block_size(*smaller) != 0) return id(GgmlType::f16);
    return smaller;
}

std::uint32_t fallback_type_or_refuse(const ck::TensorInfo& t, std::uint32_t type,
                                      const std::string& source) {
    const std::int64_t ncols = t.ne.empty() ? 1 : t.ne[0];
    if (const std::optional<std::uint32_t> to = fallback_type(type, ncols)) return *to;
    throw ck::tensor_error("row length " + std::to_string(ncols) + " is not a multiple of " +
                               shown(type) + "'s block of " + std::to_string(block_size(type)) +
                               ", and llama.cpp defines no fallback type for " + shown(type),
                           t.name, source);
}

std::string fallback_reason(std::uint32_t type, std::int64_t row_length, std::uint32_t to) {
    std::string why = "row length " + std::to_string(row_length) + " is not a multiple of " +
                      std::to_string(block_size(type)) + " (" + shown(type) + ")";
    const std::optional<std::uint32_t> smaller = smaller_block_type(type);
    if (smaller && *smaller != type && *smaller != to)
        why += " nor of " + std::to_string(block_size(*smaller)) + " (" + shown(*smaller) + ")";
    return why + " -> " + shown(to);
}

bool requires_imatrix(std::string_view tensor_name, std::uint32_t type, std::uint32_t file_type) {
    const Category c = category_of(tensor_name);
    if (c == Category::token_embd || c == Category::output) return false;
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::iq3_xxs:
        case GgmlType::iq2_xxs:
        case GgmlType::iq2_xs:
        case GgmlType::iq2_s:
        case GgmlType::iq1_m:
        case GgmlType::iq1_s:
            return true;
        case GgmlType::q2_k:
            // K-quants do without one; Q2_K_S, which lifts fewer tensors than Q2_K, counts on one.
            return file_type == static_cast<std::uint32_t>(FileType::q2_k_s);
        default:
            return false;
    }
}

MixPlan plan_mixture(const ck::ModelHeader& header, const MixSettings& settings) {
    return Planner(header, settings).plan();
}

}  // namespace ckplugin::quantize
