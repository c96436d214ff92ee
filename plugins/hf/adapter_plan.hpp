// A PEFT LoRA adapter's tensors as llama.cpp's convert_lora_to_gguf.py writes them: which
// tensor of adapter_model.safetensors becomes which `<llama.cpp name>.lora_a` / `.lora_b`, in the
// converter's order, with the data changes the base model's family asks for (the rotary
// permutation of q/k's B rows, token_embd's transposed A, Gemma's norm shift, stacked experts),
// and the type each is written in for the converter's --outtype.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "architectures.hpp"
#include "checkpoint.hpp"
#include "ck/context.hpp"
#include "ck/model.hpp"
#include "hf_config.hpp"

namespace ckplugin::hf {

// What adapter_config.json says that the conversion uses or warns about.
struct LoraConfig {
    double alpha = 0;                              // lora_alpha
    bool rslora = false;                           // use_rslora
    std::vector<std::uint32_t> invocation_tokens;  // alora_invocation_tokens (aLoRA)
    std::vector<std::string> alpha_pattern;        // modules alpha_pattern gives their own alpha
};

// Reads and checks adapter_config.json (`config`, read from `file`): a LoRA (peft_type), not
// DoRA, with a numeric lora_alpha; an aLoRA invocation_string without its tokens is refused (the
// converter tokenizes it with transformers).
LoraConfig read_lora_config(const nlohmann::ordered_json& config, const std::string& file);

// One tensor of the GGUF adapter and what its values are made of.
struct AdapterTensor {
    ck::TensorInfo info;               // as written
    std::vector<StoredTensor> stored;  // the factor, or each expert's factor in expert order
    std::int64_t heads = 0;            // not 0: rows permuted out of the rotary layout in heads
    bool transpose = false;            // token_embd's lora_a: A [r, vocab] written as A^T
    bool shift_norm = false;           // a Gemma norm (mergekit adapters carry norms): + 1
};

struct AdapterPlanInputs {
    const Architecture& architecture;
    const Hparams& hp;  // the base model's config.json
    const Checkpoint& weights;
    std::string outtype;    // f32, f16, bf16 or q8_0
    bool base_ties_output;  // the base has no output.weight of its own (tied embeddings)
    ck::Context& context;   // for the converter's warnings
};

// The adapter's tensors in the converter's order: the norms it passes through first, then
// each module's lora_a and lora_b where the module's first tensor sorts. Throws ck::Error naming
// the tensor for what the converter refuses (a name that is no LoRA factor, DoRA's magnitude
// vectors, a module without its A or B, one it cannot map) and for what it would write wrongly.
std::vector<AdapterTensor> plan_adapter(const AdapterPlanInputs& in);

// The elements gguf-py's get_total_parameter_count gives an adapter (before it negates them):
// each lora_b as the module it changes (lora_b's rows times the width of the lora_a before it),
// and every other tensor's elements.
std::uint64_t adapter_parameter_count(const std::vector<AdapterTensor>& plan);

}  // namespace ckplugin::hf
