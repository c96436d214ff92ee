// What a llama.cpp model uses beyond the plain Llama graph: per layer an RMSNorm, separate
// q/k/v/output projections whose heads are embedding_length / head_count wide, an RMSNorm and
// a SwiGLU feed-forward (gate, up, down), then a final norm, with RoPE computed from rope_theta
// alone. A runtime that implements only that graph (C-Kernel-Engine's bump v3 and v4 files)
// would run a different model if these were dropped, so the bump writers and headpack refuse a
// model that has any (docs/decisions/0054-bump-takes-the-plain-llama-graph.md).
//
// Found from the tensor directory and the metadata alone: no tensor byte is read. Bias tensors
// are not listed (bump v3 stores q/k/v biases; v4 refuses them itself).
#pragma once

#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/model.hpp"

namespace ck::llama {

struct GraphFeature {
    std::string what;  // "a mixture-of-experts feed-forward (4 experts, 2 per token)"
    std::vector<std::string> tensors;  // the tensors that show it, in header order
    std::vector<std::string> keys;     // or the keys, "gemma2.attn_logit_softcapping = 50"
};

// Every feature the model has beyond the plain graph, in a fixed order: experts, fused
// attention, fused gate and up, per-head q/k norms, norms after attention and feed-forward, a
// head size other than E / H, logit soft-capping, sliding-window attention, what the
// architecture implies (Gemma's GELU and embedding scale), per-frequency RoPE factors, RoPE
// scaling. Empty for a plain model (llama, mistral, qwen2, ...).
std::vector<GraphFeature> beyond_plain_graph(const ModelHeader& header);

// Refuses, for `consumer` ("bump v3", "headpack"), a model with any such feature: throws a
// ck::Error naming the first feature's first tensor (else key) and the architecture, listing
// every feature with its evidence, and saying that nothing was written. Returns for a plain
// model.
void refuse_beyond_plain_graph(const ModelHeader& header, const std::string& consumer);

}  // namespace ck::llama
