// Tensors llama.cpp's converter computes from config.json rather than reads from the weights
// (generate_extra_tensors): Llama 3's rope_freqs and Phi-3's long-context rope factors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "architectures.hpp"
#include "hf_config.hpp"

namespace ckplugin::hf {

struct GeneratedTensor {
    std::string name;  // llama.cpp's
    std::vector<float> values;
};

struct GeneratedTensors {
    std::vector<GeneratedTensor> tensors;  // written first, in this order
    // Phi-3's <arch>.rope.scaling.attn_factor, which the converter writes while it makes the
    // factors: the file's second key.
    std::optional<float> attn_factor;
};

// Throws ck::Error naming the config key when the rope parameters do not allow the tensors.
GeneratedTensors generate_tensors(const Architecture& architecture, const Hparams& hp);

// The llama3 rope factors for head dimension `dim`, computed in float32 steps as torch does
// (exposed for tests).
struct Llama3Rope {
    double base = 10000.0, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
    double original_context = 8192;
};
std::vector<float> llama3_rope_factors(const Llama3Rope& rope, std::uint32_t dim);

}  // namespace ckplugin::hf
