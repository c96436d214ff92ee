#include "adapter_plan.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include <boost/algorithm/string/replace.hpp>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/tensor_io.hpp"
#include "tensor_plan.hpp"

namespace ckplugin::hf {
namespace {

using ck::GgmlType;
using nlohmann::ordered_json;

constexpr std::uint32_t type_id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

[[noreturn]] void config_failure(const std::string& file, const char* key,
                                 const std::string& what) {
    throw ck::Error(what, file, std::nullopt, std::string("key '") + key + "'");
}

bool flag_set(const ordered_json& config, const char* key) {
    const auto it = config.find(key);
    return it != config.end() && it->is_boolean() && it->get<bool>();
}

// Python's truth of a JSON value: what the converter's `if value:` tests.
bool json_truthy(const ordered_json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
    return true;
}

std::vector<std::uint32_t> invocation_tokens(const ordered_json& config, const std::string& file) {
    std::vector<std::uint32_t> tokens;
    const auto listed = config.find("alora_invocation_tokens");
    if (listed != config.end() && json_truthy(*listed)) {
        if (!listed->is_array())
            config_failure(file, "alora_invocation_tokens", "is not a list of token ids");
        for (const ordered_json& id : *listed) {
            if (!id.is_number_unsigned() || id.get<std::uint64_t>() > UINT32_MAX)
                config_failure(file, "alora_invocation_tokens",
                               "holds " + id.dump() + ", which is no token id (the converter " +
                                   "writes them as u32)");
            tokens.push_back(id.get<std::uint32_t>());
        }
    }
    const auto text = config.find("invocation_string");
    if (tokens.empty() && text != config.end() && json_truthy(*text))
        config_failure(file, "invocation_string",
                       "an aLoRA adapter without alora_invocation_tokens: the converter "
                       "tokenizes invocation_string with transformers' tokenizer of the base, "
                       "which ckhost does not run; add the token ids as alora_invocation_tokens");
    return tokens;
}

}  // namespace

LoraConfig read_lora_config(const ordered_json& config, const std::string& file) {
    LoraConfig lora;
    const auto type = config.find("peft_type");
    if (type != config.end() && *type != "LORA")
        config_failure(file, "peft_type",
                       "the adapter is " + type->dump() +
                           ", not a LoRA: convert_lora_to_gguf.py and llama.cpp take LoRA "
                           "adapters only");
    if (flag_set(config, "use_dora"))
        config_failure(file, "use_dora",
                       "a DoRA adapter (use_dora true) rescales every column of the weight by its "
                       "lora_magnitude_vector, which a GGUF LoRA adapter cannot hold (the "
                       "converter refuses those tensors); merge it with PEFT instead");
    const auto alpha = config.find("lora_alpha");
    if (alpha == config.end() || !alpha->is_number())
        config_failure(file, "lora_alpha",
                       alpha == config.end() ? std::string("is missing (the converter needs it)")
                                             : "is " + alpha->dump() + ", not a number");
    lora.alpha = alpha->get<double>();
    lora.rslora = flag_set(config, "use_rslora");
    if (const auto pattern = config.find("alpha_pattern");
        pattern != config.end() && pattern->is_object())
        for (auto it = pattern->begin(); it != pattern->end(); ++it)
            lora.alpha_pattern.push_back(it.key());
    lora.invocation_tokens = invocation_tokens(config, file);
    return lora;
}

namespace {

[[noreturn]] void adapter_failure(const Checkpoint& weights, const StoredTensor& t,
                                  const std::string& what) {
    throw ck::Error("tensor '" + t.info->name + "' " + what, weights.file_of(t.shard),
                    t.info->source_offset, ck::support::tensor_subject(t.info->name));
}

// get_base_tensor_name, and the base class's filter: the checkpoint tensor a factor changes.
std::string module_weight_name(std::string name) {
    for (const char* prefix : {"base_model.model.", "language_model."})
        boost::algorithm::replace_all(name, prefix, "");
    for (const char* factor :
         {".lora_A.weight", ".lora_B.weight", ".lora_embedding_A", ".lora_embedding_B"})
        boost::algorithm::replace_all(name, factor, ".weight");
    return name;
}

enum class Factor { a, b, neither };

Factor factor_of(const std::string& name) {
    const auto has = [&name](const char* part) { return name.find(part) != std::string::npos; };
    if (has(".lora_A.weight") || has(".lora_embedding_A")) return Factor::a;
    if (has(".lora_B.weight") || has(".lora_embedding_B")) return Factor::b;
    return Factor::neither;
}

// numpy's shape of a tensor of GGUF dimensions `ne`, as Python prints a tuple: "(256, 4)".
std::string numpy_shape(const std::vector<std::int64_t>& ne) {
    std::ostringstream s;
    s << '(';
    for (auto d = ne.rbegin(); d != ne.rend(); ++d) s << (d == ne.rbegin() ? "" : ", ") << *d;
    s << (ne.size() == 1 ? ",)" : ")");
    return s.str();
}

// One module's two factors (the checkpoint tensor they change: `weight`).
struct Module {
    std::string weight;
    std::optional<StoredTensor> a, b;
};

class AdapterPlanner {
  public:
    explicit AdapterPlanner(const AdapterPlanInputs& in);
    std::vector<AdapterTensor> run();

  private:
    void collect(const StoredTensor& t);
    void plan_norm(const StoredTensor& t, const std::string& weight);
    // Checks the module's pair and returns its rank.
    std::int64_t check_pair(const Module& m) const;
    void plan_module(const Module& m);
    bool take_expert(const Module& m);
    void stack_experts(std::uint64_t layer, std::vector<std::optional<Module>>& slots);
    AdapterTensor factor(std::string name, std::vector<StoredTensor> stored,
                         std::vector<std::int64_t> ne) const;
    std::uint32_t written_type(const std::string& name, const std::vector<std::int64_t>& ne) const;

    const AdapterPlanInputs& in_;
    std::uint32_t block_count_;
    std::uint32_t n_expert_ = 0;
    std::optional<std::regex> expert_names_;
    std::vector<AdapterTensor> out_;
    std::vector<Module> modules_;
    std::map<std::string, std::size_t> module_index_;
    std::map<std::uint64_t, std::vector<std::optional<Module>>> expert_layers_;
};

AdapterPlanner::AdapterPlanner(const AdapterPlanInputs& in)
    : in_(in), block_count_(in.hp.required_u32(block_count_names())) {
    if (in.architecture.experts)
        if (const auto n = in.hp.u32({"num_local_experts", "num_experts"}); n && *n > 0) {
            n_expert_ = *n;
            expert_names_ = expert_pattern(*in.architecture.experts);
        }
}

std::uint32_t AdapterPlanner::written_type(const std::string& name,
                                           const std::vector<std::int64_t>& ne) const {
    // prepare_tensors: 1-D tensors are F32; the others take --outtype, Q8_0 only for rows
    // its 32-value blocks divide (gguf-py's QuantError, then F16).
    if (ne.size() <= 1 || in_.outtype == "f32") return type_id(GgmlType::f32);
    if (in_.outtype == "f16") return type_id(GgmlType::f16);
    if (in_.outtype == "bf16") return type_id(GgmlType::bf16);
    if (ne[0] % 32 == 0) return type_id(GgmlType::q8_0);
    in_.context.warn(ck::support::tensor_subject(name) + ": can't quantize tensor with shape " +
                     numpy_shape(ne) + " to Q8_0, falling back to F16 (as the converter does)");
    return type_id(GgmlType::f16);
}

AdapterTensor AdapterPlanner::factor(std::string name, std::vector<StoredTensor> stored,
                                     std::vector<std::int64_t> ne) const {
    AdapterTensor t;
    t.info = *stored.front().info;
    t.info.name = std::move(name);
    t.info.ne = std::move(ne);
    t.info.type = written_type(t.info.name, t.info.ne);
    t.info.nbytes = *ck::tensor_bytes(t.info.type, t.info.ne);
    t.stored = std::move(stored);
    return t;
}

void AdapterPlanner::collect(const StoredTensor& t) {
    const std::string& name = t.info->name;
    const std::string weight = module_weight_name(name);
    const Factor f = factor_of(name);
    if (in_.architecture.skip_lm_head && weight == "lm_head.weight") {
        // Gemma 2's converter filters lm_head out before it looks at the factors: the adapter
        // is written without it. Said, not silent.
        in_.context.warn(ck::support::tensor_subject(name) +
                         ": left out, as the converter leaves it out: llama.cpp's " +
                         std::string(in_.architecture.arch) +
                         " has no output.weight (the output is token_embd), so this part of "
                         "the fine-tune is lost");
        return;
    }
    if (f == Factor::neither) {
        if (name.find(".base_layer.weight") != std::string::npos) return;
        if (name.find("_layernorm") != std::string::npos || name.find(".norm") != std::string::npos)
            return plan_norm(t, weight);
        const bool embedding = name.find(".embed_tokens.weight") != std::string::npos ||
                               name.find(".lm_head.weight") != std::string::npos;
        adapter_failure(in_.weights, t,
                        std::string("is not a lora_A or lora_B tensor, which the converter "
                                    "refuses") +
                            (name.find("lora_magnitude_vector") != std::string::npos
                                 ? " (a DoRA magnitude vector: DoRA cannot be a GGUF LoRA)"
                             : embedding ? " (whole embeddings in an adapter: new tokens added "
                                           "while fine-tuning, which a LoRA adapter cannot hold)"
                                         : ""));
    }
    const auto [at, added] = module_index_.emplace(weight, modules_.size());
    if (added) modules_.push_back({weight, std::nullopt, std::nullopt});
    std::optional<StoredTensor>& slot =
        f == Factor::a ? modules_[at->second].a : modules_[at->second].b;
    if (slot)
        adapter_failure(in_.weights, t,
                        "is a second " + std::string(f == Factor::a ? "A" : "B") + " factor of " +
                            weight + " (the first: '" + slot->info->name + "')");
    slot = t;
}

// mergekit-extract-lora puts norms in an adapter; the converter passes them through (F32).
void AdapterPlanner::plan_norm(const StoredTensor& t, const std::string& weight) {
    const std::optional<std::string> name = llama_name(in_.architecture, weight, block_count_);
    if (!name || name->find("_norm") == std::string::npos || t.info->ne.size() != 1)
        adapter_failure(in_.weights, t,
                        "is not a lora_A or lora_B tensor, nor a 1-D norm the converter passes "
                        "through");
    AdapterTensor norm = factor(*name, {t}, t.info->ne);
    norm.shift_norm = in_.architecture.norm_plus_one && weight.ends_with("norm.weight");
    out_.push_back(std::move(norm));
}

std::int64_t AdapterPlanner::check_pair(const Module& m) const {
    if (!m.a || !m.b) {
        const StoredTensor& present = m.a ? *m.a : *m.b;
        adapter_failure(in_.weights, present,
                        std::string("has no ") + (m.a ? "lora_B" : "lora_A") +
                            " partner: a LoRA module needs both factors");
    }
    const auto& a = m.a->info->ne;
    const auto& b = m.b->info->ne;
    if (a.size() != 2 || b.size() != 2 || a[1] != b[0])
        adapter_failure(in_.weights, *m.b,
                        "of shape " + numpy_shape(b) + " does not pair with its A factor '" +
                            m.a->info->name + "' of shape " + numpy_shape(a) +
                            ": A must be [r, in], B [out, r]");
    return a[1];
}

void AdapterPlanner::plan_module(const Module& m) {
    check_pair(m);
    if (take_expert(m)) return;
    const std::optional<std::string> name = llama_name(in_.architecture, m.weight, block_count_);
    if (!name)
        adapter_failure(in_.weights, *m.a,
                        "changes '" + m.weight + "', which has no llama.cpp name for " +
                            std::string(in_.architecture.arch) +
                            " (the converter: \"Can not map tensor\")");
    const ck::TensorInfo& a = *m.a->info;
    AdapterTensor lora_a = factor(*name + ".lora_a", {*m.a}, a.ne);
    AdapterTensor lora_b = factor(*name + ".lora_b", {*m.b}, m.b->info->ne);
    if (*name == "token_embd.weight") {
        // Gemma 3's converter cuts token_embd to the vocabulary but slices the adapter's
        // factors along the wrong axis: its lora_a keeps every row, and llama.cpp refuses it.
        if (in_.architecture.trim_embedding)
            adapter_failure(in_.weights, *m.a,
                            "is a LoRA of the embedding, which " +
                                std::string(in_.architecture.arch) +
                                "'s converter writes with more rows than token_embd has");
        // llm_build_inp_embd multiplies the embedding's factors the other way round.
        lora_a = factor(*name + ".lora_a", {*m.a}, {a.ne[1], a.ne[0]});
        lora_a.transpose = true;
    }
    if (*name == "output.weight" && in_.base_ties_output)
        in_.context.warn(ck::support::tensor_subject(*name + ".lora_a") +
                         ": a LoRA of lm_head, but the base model ties its output to token_embd "
                         "(tie_word_embeddings): llama.cpp finds no output.weight to apply it to "
                         "and refuses the adapter, and llama-export-lora drops it");
    const bool is_q = name->ends_with(".attn_q.weight"), is_k = name->ends_with(".attn_k.weight");
    if (in_.architecture.permute_qk && (is_q || is_k)) {
        const std::uint32_t heads =
            in_.hp.required_u32({"num_attention_heads", "n_head", "n_heads"});
        lora_b.heads =
            is_q ? heads : in_.hp.u32({"num_key_value_heads", "n_kv_heads"}).value_or(heads);
        if (lora_b.heads == 0 || m.b->info->ne[1] % (2 * lora_b.heads) != 0)
            adapter_failure(in_.weights, *m.b,
                            "of shape " + numpy_shape(m.b->info->ne) + " cannot be split into " +
                                std::to_string(lora_b.heads) + " heads of rotary pairs");
    }
    out_.push_back(std::move(lora_a));
    out_.push_back(std::move(lora_b));
}

// Experts' modules are held back per layer, as the converter holds their tensors, and written
// as three stacked pairs when the layer has all of them.
bool AdapterPlanner::take_expert(const Module& m) {
    std::smatch match;
    if (!expert_names_ || !std::regex_match(m.weight, match, *expert_names_)) return false;
    const auto& parts = in_.architecture.experts->parts;
    std::size_t part = parts.size();
    for (std::size_t p = 0; p < parts.size(); ++p)
        if (match[3].str() == parts[p].hf) part = p;
    const std::uint64_t layer = std::stoull(match[1].str()), expert = std::stoull(match[2].str());
    if (part == parts.size() || expert >= n_expert_)
        adapter_failure(in_.weights, *m.a,
                        "changes '" + m.weight + "', which is no expert tensor of this model (" +
                            std::to_string(n_expert_) + " experts)");
    auto& slots = expert_layers_[layer];
    slots.resize(3 * std::size_t{n_expert_});
    slots[part * n_expert_ + expert] = m;
    if (std::any_of(slots.begin(), slots.end(), [](const auto& s) { return !s; })) return true;
    stack_experts(layer, slots);
    expert_layers_.erase(layer);
    return true;
}

void AdapterPlanner::stack_experts(std::uint64_t layer, std::vector<std::optional<Module>>& slots) {
    const auto& parts = in_.architecture.experts->parts;
    for (std::size_t p = 0; p < parts.size(); ++p) {
        std::vector<StoredTensor> a, b;
        const Module& first = *slots[p * n_expert_];
        for (std::uint32_t e = 0; e < n_expert_; ++e) {
            const Module& m = *slots[p * n_expert_ + e];
            if (m.a->info->ne != first.a->info->ne || m.b->info->ne != first.b->info->ne)
                adapter_failure(in_.weights, *m.a,
                                "differs in shape from expert 0's factors: the experts' "
                                "factors cannot be stacked");
            a.push_back(*m.a);
            b.push_back(*m.b);
        }
        const std::string name =
            "blk." + std::to_string(layer) + "." + std::string(parts[p].gguf) + ".weight";
        auto ne_a = first.a->info->ne, ne_b = first.b->info->ne;
        ne_a.push_back(n_expert_);
        ne_b.push_back(n_expert_);
        out_.push_back(factor(name + ".lora_a", std::move(a), ne_a));
        out_.push_back(factor(name + ".lora_b", std::move(b), ne_b));
    }
}

std::vector<AdapterTensor> AdapterPlanner::run() {
    // The converter yields the norms as it meets them and the modules after all tensors were
    // sorted into them.
    for (const StoredTensor& t : in_.weights.tensors()) collect(t);
    for (const Module& m : modules_) plan_module(m);
    if (!expert_layers_.empty()) {
        const auto& [layer, slots] = *expert_layers_.begin();
        const auto held =
            std::find_if(slots.begin(), slots.end(), [](const auto& s) { return s.has_value(); });
        adapter_failure(in_.weights, *(*held)->a,
                        "is a LoRA of one of layer " + std::to_string(layer) +
                            "'s experts, but the adapter does not change all of that layer's " +
                            std::to_string(slots.size()) +
                            " expert tensors, and the converter stacks them all or fails");
    }
    return std::move(out_);
}

}  // namespace

std::vector<AdapterTensor> plan_adapter(const AdapterPlanInputs& in) {
    return AdapterPlanner(in).run();
}

std::uint64_t adapter_parameter_count(const std::vector<AdapterTensor>& plan) {
    std::uint64_t total = 0;
    const AdapterTensor* last_a = nullptr;
    for (const AdapterTensor& t : plan) {
        if (t.info.name.ends_with(".lora_a")) {
            last_a = &t;
            continue;
        }
        std::uint64_t size = t.info.elements();
        if (t.info.name.ends_with(".lora_b") && last_a)
            size = size / static_cast<std::uint64_t>(t.info.ne[0]) *
                   static_cast<std::uint64_t>(last_a->info.ne[0]);
        total += size;
    }
    return total;
}

}  // namespace ckplugin::hf
