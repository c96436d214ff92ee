// The hf writer's config side, shared by its parts (export_config.cpp, export_rope.cpp): a GGUF
// model's metadata read with every value's type checked, and floats written as config.json
// needs them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ck/model.hpp"

namespace ckplugin::hf {

// The metadata of `header`: a value of the wrong type is a ck::key_error naming its key.
class ExportKeys {
  public:
    ExportKeys(const ck::ModelHeader& header, std::string_view arch)
        : header_(header), prefix_(std::string(arch) + ".") {}

    // "<arch>.<suffix>".
    std::string key(std::string_view suffix) const { return prefix_ + std::string(suffix); }
    const ck::ModelHeader& header() const { return header_; }

    const ck::Value* find(const std::string& key) const { return header_.metadata.find(key); }
    // An integer from 0 to 4294967295 (any GGUF integer type holding one).
    std::optional<std::uint32_t> count(const std::string& key) const;
    // An f32 (or an f64, narrowed), finite.
    std::optional<float> f32(const std::string& key) const;
    std::optional<std::string> text(const std::string& key) const;
    std::optional<bool> flag(const std::string& key) const;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const;

  private:
    const ck::ModelHeader& header_;
    std::string prefix_;
};

// A GGUF f32 as config.json holds it: the shortest decimal that a JSON reader (into a double,
// then narrowed to float, as llama.cpp's converter does) reads back to the same f32: 1e-06, not
// 9.999999974752427e-07. As a JSON integer when `integral` and the value is a whole number
// (Qwen3 and Gemma 3 write rope_theta so).
nlohmann::ordered_json json_f32(float value, bool integral = false);

}  // namespace ckplugin::hf
