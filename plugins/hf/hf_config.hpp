// config.json read as llama.cpp's converter reads it: find_hparam's "first key present",
// text_config folded into the top level, and the rope parameters mirrored from the top-level
// keys (TextModel.__init__), so every family's rules can ask one place.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ckplugin::hf {

class Hparams {
  public:
    // `config` is config.json as parsed; `file` names it in errors.
    Hparams(nlohmann::ordered_json config, std::string file);

    // The first of `keys` present with a non-null value.
    const nlohmann::ordered_json* find(std::initializer_list<const char*> keys) const {
        return find(std::vector<const char*>(keys));
    }
    const nlohmann::ordered_json* find(const std::vector<const char*>& keys) const;
    // As a count; throws naming the key when the value is not one.
    std::optional<std::uint32_t> u32(std::initializer_list<const char*> keys) const {
        return u32(std::vector<const char*>(keys));
    }
    std::optional<std::uint32_t> u32(const std::vector<const char*>& keys) const;
    std::uint32_t required_u32(std::initializer_list<const char*> keys) const {
        return required_u32(std::vector<const char*>(keys));
    }
    std::uint32_t required_u32(const std::vector<const char*>& keys) const;
    // As a number; throws naming the first key when the value is not one.
    std::optional<double> number(std::initializer_list<const char*> keys) const {
        return number(std::vector<const char*>(keys));
    }
    std::optional<double> number(const std::vector<const char*>& keys) const;

    // The attention head size: head_dim, else hidden_size / num_attention_heads (LlamaModel's
    // rope.dimension_count and the size of Llama 3's rope_freqs); throws for 0 heads.
    std::uint32_t head_dim_or_split() const;
    // int(partial_rotary_factor * hidden_size) // num_attention_heads: Phi-3's rotary dimensions
    // (its rope.dimension_count, and twice the length of its long-context factors); nullopt for
    // 0 heads, which each caller reports in its own way.
    std::optional<std::int64_t> partial_rotary_dims() const;

    // The rope parameters (rope_parameters or rope_scaling, with rope_theta, the sliding
    // window's theta, rope_type, partial_rotary_factor and original_max_position_embeddings
    // mirrored in), and the part for full attention layers.
    const nlohmann::ordered_json& rope() const { return rope_; }
    const nlohmann::ordered_json& full_attention_rope() const;
    std::string rope_type() const;
    // The same in ASCII lowercase, as the converter's rope_type.lower() compares it where it
    // does (llama3 factors, longrope; TextModel's scaling keys take the type as written).
    std::string rope_type_lowercase() const;

    [[noreturn]] void fail(const char* key, const std::string& what) const;
    const nlohmann::ordered_json& json() const { return config_; }
    const std::string& file() const { return file_; }

  private:
    nlohmann::ordered_json config_;
    nlohmann::ordered_json rope_;
    std::string file_;
};

}  // namespace ckplugin::hf
