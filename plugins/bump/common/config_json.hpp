// config.json beside the bump file: written byte for byte as the reference converter's Python
// `json.dump(config, f, indent=2)` plus a newline, read back with nlohmann::json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "ck/llama/llama_keys.hpp"
#include "ck/support/python_float.hpp"

namespace ckplugin::bump {
using namespace ck;

// The file both versions write beside the weights, unless the user names another.
inline constexpr std::string_view config_file_name = "config.json";

struct Config {
    std::string model_type;  // general.architecture
    std::uint64_t num_hidden_layers = 0;
    std::uint64_t hidden_size = 0;
    std::uint64_t intermediate_size = 0;
    std::uint64_t num_attention_heads = 0;
    std::uint64_t num_key_value_heads = 0;
    std::uint64_t vocab_size = 0;
    std::uint64_t max_position_embeddings = 0;
    llama::FloatParam rms_norm_eps;
    llama::FloatParam rope_theta;
    // bump v4 only: written last, after rope_theta, as the v4 reference converter does.
    std::optional<bool> tie_word_embeddings;
    Metadata entries;  // every key of a file read back, as "config.<key>" (for inspect)
};

// The file's text: keys in bump.md's order, two-space indent, trailing newline.
std::string render_config_json(const Config& config);

// Python's repr() of a float (the support library's, shared with the hf writer).
using support::python_float_repr;
// A JSON string as Python's json module writes it (ensure_ascii: non-ASCII as \uXXXX).
std::string python_json_string(std::string_view utf8);

// Reads the fields the reader needs; ck::Error naming the file and key on any problem.
Config read_config_json(const std::filesystem::path& path);

}  // namespace ckplugin::bump
