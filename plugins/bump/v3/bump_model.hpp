// From a llama-family model header to the plan of a bump v3 file: every validation of
// bump.md, the slot layout, which input tensors fill which slot and config.json's values.
// Descriptors only: no tensor byte is read here, so the writer can refuse before writing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bump_layout.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/model.hpp"
#include "config_json.hpp"
#include "input_model.hpp"

namespace ckplugin::bump {
using namespace ck;

struct SlotFill {
    enum class Kind {
        zeros,         // pos_emb, bo, b1, b2, final_ln_bias, absent q/k/v biases
        copy,          // raw bytes (weights; F32 norms and biases)
        widen_to_f32,  // F16 / BF16 norms and biases, widened exactly
    };
    Kind kind = Kind::zeros;
    std::vector<std::size_t> tensors;  // header indices in payload order (w1: gate, then up)
};

enum class OutputWeight {
    absent,         // tied: nothing to do
    untied,         // differs from token_embd by type or shape: known before any byte
    compare_bytes,  // same type and shape: tied only if the bytes are equal
};

struct ModelPlan {
    Geometry geometry;
    std::vector<Slot> slots;
    std::vector<SlotFill> fills;  // one per slot
    std::vector<std::uint8_t> dtype_table;
    Config config;
    std::size_t token_embd = 0;  // header index
    OutputWeight output_weight = OutputWeight::absent;
    std::size_t output_weight_index = 0;
    std::string untied_reason;         // for OutputWeight::untied
    std::vector<std::string> dropped;  // input tensors with no slot, output.weight aside
    std::uint64_t file_bytes = 0;      // header + table + payload
};

struct PlanOptions {
    std::optional<std::uint32_t> context;  // writer option context=N
};

inline constexpr std::string_view output_weight_name = "output.weight";

// Throws ck::Error naming the tensor (or key) and the expected versus actual values.
ModelPlan plan_model(const ModelHeader& header, const PlanOptions& options);

}  // namespace ckplugin::bump
