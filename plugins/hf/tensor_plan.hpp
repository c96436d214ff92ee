// Which tensors a checkpoint becomes, in the converter's order, and what each one's bytes are
// made of: llama.cpp's names from the architecture's name table, experts stacked per layer,
// generated tensors first, and the data changes (rotary permutation, F32 widening, Gemma's
// norm shift, Gemma 3's embedding trim) the description asks for.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "architectures.hpp"
#include "checkpoint.hpp"
#include "ck/model.hpp"
#include "generated_tensors.hpp"
#include "hf_config.hpp"

namespace ckplugin::hf {

struct PlannedTensor {
    enum class Action {
        copy,           // the stored bytes (their first info.nbytes: Gemma 3's trim)
        permute_rows,   // q/k rows out of the rotary layout
        widen_to_f32,   // F16/BF16 -> F32
        shift_norm,     // Gemma: + 1 in the tensor's precision, then F32
        stack_experts,  // the experts' tensors one after the other
        generated,      // computed from config.json
    };
    ck::TensorInfo info;  // as written
    Action action = Action::copy;
    std::vector<StoredTensor> stored;  // one; the experts in index order for stack_experts
    std::int64_t heads = 0;            // permute_rows
    std::size_t generated = 0;         // index into GeneratedTensors::tensors
};

struct PlanInputs {
    const Architecture& architecture;
    const Hparams& hp;
    const Checkpoint& checkpoint;
    const GeneratedTensors& generated;
    std::optional<std::uint64_t> vocabulary_rows;  // Gemma 3's trim: the tokenizer's size
};

// Throws ck::Error naming the tensor and its file for a tensor without a llama.cpp name, an
// unsupported type, experts that cannot be stacked, two tensors with one name.
std::vector<PlannedTensor> plan_tensors(const PlanInputs& in);

}  // namespace ckplugin::hf
