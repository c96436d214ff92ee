// Llama-family hyperparameters as llama.cpp stores them in GGUF metadata, shared by the bump
// writer and the headpack transform: keys are `<arch>.<suffix>` where <arch> is
// general.architecture (default llama), falling back to `llama.<suffix>` (bump.md), so
// qwen2/mistral-style files read like llama ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ck/conventions/ckhost_keys.hpp"
#include "ck/error.hpp"
#include "ck/model.hpp"

namespace ck::llama {

// Where a value was found, so that errors name the key the file really has.
struct FoundValue {
    const Value* value = nullptr;
    std::string key;
};

// A float hyperparameter and whether it was stored as f32 (config.json prints an f32 as the
// shortest decimal that reads back to the same f32, not to the same double).
struct FloatParam {
    double value = 0;
    bool single_precision = false;
};

class ArchKeys {
  public:
    explicit ArchKeys(const Metadata& metadata);

    const std::string& arch() const noexcept { return arch_; }
    const Metadata& metadata() const noexcept { return metadata_; }
    // The key name used when reporting a missing value: `<arch>.<suffix>`.
    std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }

    std::optional<FoundValue> find(std::string_view suffix) const;
    // An integer that fits u32; nullopt when absent, ck::Error naming the key when present but
    // not such an integer.
    std::optional<std::uint32_t> u32(std::string_view suffix) const;
    // An integer or float value; nullopt when absent, ck::Error when present but not a number.
    std::optional<FloatParam> number(std::string_view suffix) const;
    // Same, for a key given in full (no <arch> rewriting).
    std::optional<FloatParam> number_exact(std::string_view key) const;

  private:
    const Metadata& metadata_;
    std::string arch_;
};

// The attention geometry both plugins need. hd = E / H.
struct HeadGeometry {
    std::uint32_t embed = 0;     // E
    std::uint32_t heads = 0;     // H
    std::uint32_t kv_heads = 0;  // Hkv
    std::uint32_t head_dim = 0;  // hd
};

inline constexpr std::string_view token_embd_name = "token_embd.weight";

// Set by headpack in its planned header (u32): the padded head size, in elements, of the
// attn_q/k/v rows it produced. Absent: the rows are unpadded (hd).
using conventions::aligned_head_dim_key;

// Reads E (checked against token_embd ne0), H (required), Hkv (fallback H) and checks that
// H divides E and Hkv divides H. Each failure is a ck::Error naming the tensor or key involved
// and the expected versus actual values.
HeadGeometry head_geometry(const ModelHeader& header, const ArchKeys& keys);
struct Hyperparameters;  // ck/llama/hparams.hpp
HeadGeometry head_geometry(const ModelHeader& header, const Hyperparameters& hparams);

// RoPE scaling beyond rope_theta, as llama.cpp reads it: `<arch>.rope.scaling.factor` (else the
// older `<arch>.rope.scale_linear`) divides the positions, of the kind `<arch>.rope.scaling.type`
// names (llama.cpp's default: linear). A factor absent, 0 or 1 scales nothing.
struct RopeScaling {
    std::string type;        // "linear", "yarn", "longrope", ...
    FloatParam factor;       // as stored
    std::string factor_key;  // the key it was found under
};
std::optional<RopeScaling> rope_scaling(const ArchKeys& keys);

// Per-frequency RoPE factors, head_dim / 2 floats each, that a runtime computing RoPE from
// rope_theta alone cannot apply: Llama 3.1's (rope_type llama3) and Phi-3 long-context's
// (longrope: one set for long and one for short sequences).
inline constexpr std::string_view rope_freqs_name = "rope_freqs.weight";
inline constexpr std::string_view rope_factor_tensor_names[] = {
    rope_freqs_name, "rope_factors_long.weight", "rope_factors_short.weight"};

// The SDK's subject format (ck/error.hpp), by the names llama code has always used.
using ck::key_subject;
using ck::tensor_subject;

}  // namespace ck::llama
