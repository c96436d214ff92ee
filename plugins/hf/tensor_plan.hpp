// Which tensors a checkpoint becomes, in the converter's order, and what each one's bytes are
// made of: llama.cpp's names from the architecture's name table, experts stacked per layer,
// generated tensors first, and the data changes (rotary permutation, F32 widening, Gemma's
// norm shift, Gemma 3's embedding trim) the description asks for.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "architectures.hpp"
#include "checkpoint.hpp"
#include "ck/ggml_types.hpp"
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

// llama.cpp's name for the checkpoint tensor `name` ("model.layers.0.self_attn.q_proj.weight"
// -> "blk.0.attn_q.weight"), or nullopt when the architecture has none.
std::optional<std::string> llama_name(const Architecture& a, const std::string& name,
                                      std::uint32_t block_count);

// Matches a per-expert checkpoint tensor of `layout` ("model.layers.0.block_sparse_moe.experts.
// 3.w1.weight"): its layer, its expert and its part ("w1") are the three groups.
std::regex expert_pattern(const ExpertLayout& layout);

// A row of HF's rotary layout (per head: the first halves of all pairs, then the second
// halves) -> llama.cpp's (the halves interleaved): LlamaModel.permute in the converter. `rows`
// is a whole number of heads.
void permute_rows(const std::byte* in, std::byte* out, std::int64_t rows, std::size_t row_bytes,
                  std::int64_t heads);

// Gemma's norm + 1 in the tensor's precision (the converter adds to the torch tensor after
// widening BF16 to F32; F16 stays F16, so its sum is rounded to F16), then F32. torch's F16
// addition rounds to nearest even, as ggml's f32_to_f16 does; the numpy rounding the F16
// outputs use (f32_to_f16_numpy) differs from it only in a NaN's bits, and a norm holds none.
void shift_norm(const std::byte* in, std::byte* out, std::size_t n, ck::GgmlType type);

}  // namespace ckplugin::hf
