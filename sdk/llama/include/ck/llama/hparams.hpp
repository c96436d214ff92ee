// The model hyperparameters ckhost's stages decide by, read once from GGUF metadata the way
// llama.cpp's loader fills llama_hparams: the architecture prefix (`<arch>.<suffix>`, falling
// back to `llama.<suffix>` as bump.md documents), per-layer arrays, expert counts and the head
// geometry. quantize's mixture rules, the bump writers and headpack all read through this, so
// a new architecture (qwen3, qwen3moe, gemma2/3, phi3, mixtral) is taught here once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ck/llama/llama_keys.hpp"
#include "ck/metadata.hpp"

namespace ck::llama {

// A count GGUF stores either once for every layer (an integer) or per layer (an integer
// array, as OpenELM's head counts and Gemma 3n's feed-forward sizes are).
class PerLayer {
  public:
    PerLayer(std::vector<std::uint32_t> values, std::string key)
        : values_(std::move(values)), key_(std::move(key)) {}

    // Layer i's value; a single integer serves every layer. llama.cpp reads layer 0 where a
    // rule needs one number for the model (n_head(0)).
    std::uint32_t layer(std::size_t i) const {
        return values_.size() == 1 ? values_[0] : values_.at(i);
    }
    std::uint32_t first() const { return values_.front(); }
    // Every layer alike (a scalar, or an array of one repeated value).
    bool uniform() const;
    const std::vector<std::uint32_t>& values() const noexcept { return values_; }
    // The key it was read from, for messages.
    const std::string& key() const noexcept { return key_; }

  private:
    std::vector<std::uint32_t> values_;  // never empty
    std::string key_;
};

struct Hyperparameters {
    std::string arch;          // general.architecture; "llama" when the file does not say
    bool arch_stated = false;  // whether general.architecture was there (a string, not empty)
    std::optional<std::uint32_t> block_count;       // n_layer
    std::optional<std::uint32_t> embedding_length;  // n_embd
    std::optional<std::uint32_t> context_length;    // n_ctx_train
    std::optional<PerLayer> feed_forward_length;    // n_ff
    std::optional<PerLayer> head_count;             // n_head
    std::optional<PerLayer> head_count_kv;          // n_head_kv; absent: as many as head_count
    // The query/key and value head sizes when the model states them: Gemma and Qwen3 heads are
    // not embedding_length / head_count wide.
    std::optional<std::uint32_t> key_length, value_length;
    std::uint32_t expert_count = 0;       // mixture-of-experts models only
    std::uint32_t expert_used_count = 0;  // experts each token is routed to

    // The key a value is (or would be) read from: `<arch>.<suffix>`, for messages.
    std::string key(std::string_view suffix) const { return arch + "." + std::string(suffix); }
};

// Reads every value above that the file has. A key present with a value of the wrong kind is
// a ck::Error naming the key (and `file`, when given); an absent key is left empty, for the
// stage that needs it to say why it does.
Hyperparameters read_hyperparameters(const Metadata& metadata, const std::string& file = {});

}  // namespace ck::llama
