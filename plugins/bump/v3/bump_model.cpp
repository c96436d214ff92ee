#include "bump_model.hpp"

#include "bump_format.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/llama_keys.hpp"

namespace ckplugin::bump {
using namespace ck;
namespace {

// What makes a weight of this type storable, in stage terms: the plugin cannot know the
// pipeline, so it names stages, and the host plans the pipeline with each of them to suggest
// one that works. F16 and BF16 models are what README.md's quantize pipeline is for, and bump
// v4 takes them as they are.
std::string weight_remedy(std::uint32_t type) {
    if (type == static_cast<std::uint32_t>(GgmlType::f16) ||
        type == static_cast<std::uint32_t>(GgmlType::bf16))
        return "quantize it with a `quantize[mix=q4_k_m]` stage before bump (README.md's "
               "pipeline for F16 and BF16 models), write bump v4 with `bump[version=4]`, or add "
               "a `dequant[to=f32]` stage before bump";
    return "add a `dequant[to=f32]` stage before bump";
}

// TensorIndex plus the v3 dtype rules.
class TensorChecker : public TensorIndex {
  public:
    explicit TensorChecker(const ModelHeader& header) : TensorIndex(header, "bump v3") {}

    void expect_weight_dtype(std::size_t index) const {
        const std::uint32_t type = at(index).type;
        if (!weight_dtype_of(type))
            refuse_dtype(index,
                         "cannot be stored in bump v3 (expected f32, q4_K or q6_K for weights); " +
                             weight_remedy(type));
    }

    void expect_widenable_dtype(std::size_t index) const {
        if (!is_float_type(at(index).type))
            refuse_dtype(index,
                         "cannot be stored in an FP32 slot (expected f32, f16 or bf16 for "
                         "norms and biases); add a `dequant[to=f32]` stage before bump");
    }

    [[noreturn]] void refuse_dtype(std::size_t index, const std::string& why) const {
        const TensorInfo& t = at(index);
        throw tensor_error("dtype " + type_string(t.type) + " " + why, t.name);
    }
};

SlotFill norm_fill(TensorChecker& tensors, std::size_t index) {
    tensors.expect_widenable_dtype(index);
    bool f32 = tensors.at(index).type == static_cast<std::uint32_t>(GgmlType::f32);
    return {f32 ? SlotFill::Kind::copy : SlotFill::Kind::widen_to_f32, {index}};
}

// headpack's padded head size when it ran before the writer: Q/K/V then have that many rows per
// head, and the header records it.
std::uint32_t aligned_head_dim(const ModelHeader& header, const Geometry& g) {
    const auto padded = headpack_head_dim(header);
    if (!padded) return g.head_dim;
    if (*padded < g.head_dim)
        throw key_error("padded head size " + std::to_string(*padded) +
                            " is smaller than head_dim " + std::to_string(g.head_dim),
                        llama::aligned_head_dim_key);
    return *padded;
}

// Which tensor fills which slot, checked one by one in payload order.
class SlotFiller {
  public:
    SlotFiller(TensorChecker& tensors, const Geometry& g)
        : tensors_(tensors),
          E_(g.embed),
          F_(g.ffn),
          q_rows_(std::int64_t(g.heads) * g.aligned_head_dim),
          kv_rows_(std::int64_t(g.kv_heads) * g.aligned_head_dim),
          dims_("E=" + std::to_string(E_) + ", H=" + std::to_string(g.heads) +
                ", Hkv=" + std::to_string(g.kv_heads) + ", hd=" + std::to_string(g.head_dim) +
                (g.aligned_head_dim != g.head_dim
                     ? ", padded head size " + std::to_string(g.aligned_head_dim)
                     : std::string()) +
                ", F=" + std::to_string(F_)),
          head_size_(g.aligned_head_dim != g.head_dim ? "hd_a" : "hd") {}

    // token_emb (the embedding, a weight) and pos_emb (zeros: RoPE models).
    void embeddings(std::size_t token_embd, std::int64_t vocab, std::vector<SlotFill>& fills) {
        tensors_.expect_shape(token_embd, {E_, vocab}, "[E, V]");
        tensors_.expect_weight_dtype(token_embd);
        weights_.push_back(token_embd);
        fills.push_back({SlotFill::Kind::copy, {token_embd}});
        fills.push_back({});  // pos_emb: zeros (RoPE models)
    }

    // The 14 slots of one layer.
    void layer(std::uint32_t layer, std::vector<SlotFill>& fills) {
        const std::string q_formula = std::string("[E, H*") + head_size_ + "]";
        const std::string kv_formula = std::string("[E, Hkv*") + head_size_ + "]";
        const std::string blk = "blk." + std::to_string(layer) + ".";
        fills.push_back(norm(blk + "attn_norm.weight"));
        fills.push_back(norm(blk + "ffn_norm.weight"));
        fills.push_back(weight(blk + "attn_q.weight", {E_, q_rows_}, q_formula));
        fills.push_back(bias(blk + "attn_q.bias", q_rows_, std::string("[H*") + head_size_ + "]"));
        fills.push_back(weight(blk + "attn_k.weight", {E_, kv_rows_}, kv_formula));
        fills.push_back(
            bias(blk + "attn_k.bias", kv_rows_, std::string("[Hkv*") + head_size_ + "]"));
        fills.push_back(weight(blk + "attn_v.weight", {E_, kv_rows_}, kv_formula));
        fills.push_back(
            bias(blk + "attn_v.bias", kv_rows_, std::string("[Hkv*") + head_size_ + "]"));
        fills.push_back(weight(blk + "attn_output.weight", {E_, E_}, "[E, E]"));
        fills.push_back({});  // bo
        fills.push_back(gate_and_up(blk));
        fills.push_back({});  // b1
        fills.push_back(weight(blk + "ffn_down.weight", {F_, E_}, "[F, E]"));
        fills.push_back({});  // b2
    }

    // final_ln_weight (output_norm) and final_ln_bias (zeros).
    void final_norm(std::vector<SlotFill>& fills) {
        fills.push_back(norm("output_norm.weight"));
        fills.push_back({});  // final_ln_bias
    }

    // Every weight tensor used so far, for the K-quant rule.
    const std::vector<std::size_t>& weights() const { return weights_; }

  private:
    SlotFill weight(const std::string& name, std::vector<std::int64_t> shape,
                    const std::string& formula) {
        std::size_t i = tensors_.require(name);
        tensors_.expect_shape(i, shape, formula + " with " + dims_);
        tensors_.expect_weight_dtype(i);
        weights_.push_back(i);
        return SlotFill{SlotFill::Kind::copy, {i}};
    }

    SlotFill norm(const std::string& name) {
        std::size_t i = tensors_.require(name);
        tensors_.expect_shape(i, {E_}, "[E] with E=" + std::to_string(E_));
        return norm_fill(tensors_, i);
    }

    SlotFill bias(const std::string& name, std::int64_t length, const std::string& formula) {
        auto i = tensors_.find(name);
        if (!i) return SlotFill{};  // llama has none: zeros, as the reference writes
        tensors_.expect_shape(*i, {length}, formula + " with " + dims_);
        return norm_fill(tensors_, *i);
    }

    // w1: the gate rows, then the up rows, in one dtype.
    SlotFill gate_and_up(const std::string& blk) {
        SlotFill w1 = weight(blk + "ffn_gate.weight", {E_, F_}, "[E, F]");
        SlotFill up = weight(blk + "ffn_up.weight", {E_, F_}, "[E, F]");
        const TensorInfo& gate_t = tensors_.at(w1.tensors[0]);
        const TensorInfo& up_t = tensors_.at(up.tensors[0]);
        if (gate_t.type != up_t.type)
            throw tensor_error(
                "dtype " + type_string(up_t.type) + ", expected " + type_string(gate_t.type) +
                    " like " + gate_t.name +
                    " (bump's w1 holds the gate rows and then the up rows in one dtype)",
                up_t.name);
        w1.tensors.push_back(up.tensors[0]);
        return w1;
    }

    TensorChecker& tensors_;
    const std::int64_t E_, F_, q_rows_, kv_rows_;
    const std::string dims_;
    const char* head_size_;
    std::vector<std::size_t> weights_;
};

// Rows cannot be padded inside (the input dimension) once block-quantized, so the runtime
// needs E and F to be whole K-quant blocks as soon as any weight is a K-quant.
void check_k_quant_blocks(const TensorChecker& tensors, const std::vector<std::size_t>& weights,
                          std::int64_t E, std::int64_t F) {
    for (std::size_t i : weights) {
        const TensorInfo& t = tensors.at(i);
        if (!is_k_quant(t.type)) continue;
        for (auto [value, key] :
             {std::pair{E, "embedding_length E"}, std::pair{F, "feed_forward_length F"}})
            if (value % k_quant_block != 0)
                throw tensor_error(
                    "dtype " + type_string(t.type) + " needs " + key +
                        " to be a multiple of 256 (expected E % 256 == 0 and F % 256 "
                        "== 0 with K-quant weights), got " +
                        std::to_string(value) +
                        "; dequantize the weights with a `dequant[to=f32]` stage",
                    t.name);
        break;
    }
}

// Dtype table and layout: each slot's dtype, size and place, and the file size.
void lay_out(const TensorChecker& tensors, ModelPlan& plan) {
    std::vector<std::uint32_t> slot_types;
    const auto roles = slot_roles(plan.geometry.layers);
    for (std::size_t s = 0; s < plan.fills.size(); ++s) {
        std::uint32_t type = is_weight_role(roles[s].first)
                                 ? tensors.at(plan.fills[s].tensors[0]).type
                                 : static_cast<std::uint32_t>(GgmlType::f32);
        slot_types.push_back(type);
        plan.dtype_table.push_back(*weight_dtype_of(type));
    }
    plan.slots = layout_slots(plan.geometry, slot_types);
    plan.file_bytes = header_bytes + 4 + plan.dtype_table.size();
    for (std::size_t s = 0; s < plan.slots.size(); ++s) {
        std::uint64_t source = 0;
        for (std::size_t i : plan.fills[s].tensors)
            source += plan.fills[s].kind == SlotFill::Kind::widen_to_f32
                          ? tensors.at(i).elements() * 4
                          : tensors.at(i).nbytes;
        if (plan.fills[s].kind != SlotFill::Kind::zeros && source != plan.slots[s].bytes)
            throw tensor_error("fills " + std::to_string(source) + " bytes of a " +
                                   std::to_string(plan.slots[s].bytes) + "-byte slot",
                               tensors.at(plan.fills[s].tensors[0]).name);
        plan.file_bytes += plan.slots[s].bytes;
    }
}

// output.weight: v3 has no slot; the runtime ties the LM head to token_emb.
void tie_output_weight(TensorChecker& tensors, const TensorInfo& embd, ModelPlan& plan) {
    auto out = tensors.find(std::string(output_weight_name));
    if (!out) return;
    plan.output_weight_index = *out;
    const TensorInfo& o = tensors.at(*out);
    if (o.type == embd.type && o.ne == embd.ne && o.nbytes == embd.nbytes) {
        plan.output_weight = OutputWeight::compare_bytes;
    } else {
        plan.output_weight = OutputWeight::untied;
        plan.untied_reason = "output.weight is " + type_string(o.type) + " " + o.shape_string() +
                             ", token_embd.weight is " + type_string(embd.type) + " " +
                             embd.shape_string();
    }
}

}  // namespace

ModelPlan plan_model(const ModelHeader& header, const PlanOptions& options) {
    const llama::ArchKeys keys(header.metadata);
    TensorChecker tensors(header);
    ModelPlan plan;
    Geometry& g = plan.geometry;
    g = read_geometry(header, tensors, {options.context, "bump[context=N]"});
    g.aligned_head_dim = aligned_head_dim(header, g);
    plan.token_embd = tensors.require(std::string(llama::token_embd_name));

    SlotFiller filler(tensors, g);
    filler.embeddings(plan.token_embd, g.vocab, plan.fills);
    for (std::uint32_t layer = 0; layer < g.layers; ++layer) filler.layer(layer, plan.fills);
    filler.final_norm(plan.fills);
    check_k_quant_blocks(tensors, filler.weights(), g.embed, g.ffn);

    lay_out(tensors, plan);
    tie_output_weight(tensors, tensors.at(plan.token_embd), plan);
    plan.dropped = tensors.unused();
    plan.config = make_config(keys, g);
    return plan;
}

}  // namespace ckplugin::bump
