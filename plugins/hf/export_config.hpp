// The way back to Hugging Face, config side: which class a GGUF model becomes, and the
// config.json / generation_config.json that class reads, recovered from the GGUF metadata, the
// tensors' shapes and the tensors llama.cpp's converter generated from config.json (rope_freqs,
// Phi-3's rope factors). The inverse of model_keys.cpp and generated_tensors.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "architectures.hpp"
#include "ck/model.hpp"

namespace ckplugin::hf {

// The Hugging Face class a GGUF model goes back to, and its family's description.
struct ExportTarget {
    const Architecture* architecture = nullptr;
    std::string hf_class;    // config.json's "architectures"[0], e.g. "LlamaForCausalLM"
    std::string model_type;  // config.json's "model_type", e.g. "llama"
};

// From general.architecture (and, for llama, the experts and the model's name); a non-empty
// `requested_class` (the writer's class= option) must be one of that family's classes. Throws
// ck::key_error naming general.architecture for an architecture the writer does not know.
ExportTarget choose_export_target(const ck::ModelHeader& header, std::string_view requested_class);

// The values of the tensors the converter generated from config.json, as the GGUF holds them
// (F32); config.json's rope_scaling is recovered from them.
struct GeneratedValues {
    std::vector<float> rope_freqs;          // rope_freqs.weight (Llama 3 rope)
    std::vector<float> rope_factors_long;   // rope_factors_long.weight (Phi-3 long context)
    std::vector<float> rope_factors_short;  // rope_factors_short.weight
};

// The GGUF tensors that are not weights of the Hugging Face model but config.json values
// (above): the writer reads them first and writes no tensor for them.
bool is_generated_tensor(std::string_view gguf_name);

// config.json for `target`, torch_dtype `torch_dtype` ("bfloat16", "float16", "float32").
// With `generated` absent (the writer's prepare(), before any tensor is read), every check is
// made except those of the generated values; with it, rope_scaling is recovered from them.
// Throws ck::key_error / ck::tensor_error naming what config.json cannot represent.
nlohmann::ordered_json export_config(const ck::ModelHeader& header, const ExportTarget& target,
                                     std::string_view torch_dtype,
                                     const std::optional<GeneratedValues>& generated);

// generation_config.json as save_pretrained writes it for this config.
nlohmann::ordered_json export_generation_config(const ck::ModelHeader& header);

// A JSON file as transformers' save_pretrained writes it (keys sorted, indent 2, newline).
std::string hf_json_text(const nlohmann::ordered_json& value);
// The same with `ensure_ascii` as json.dumps takes it: true (as above, and as config.json is
// written) escapes every character outside ' '..'~' as \uXXXX; false (tokenizer_config.json,
// tokenizer.json) writes well-formed UTF-8 as it is. Either way floats print as Python's repr
// (1e-06, 500000.0), a non-finite one is a ck::Error, and a byte that is not well-formed UTF-8
// becomes \u00XX (ensure_ascii) or U+FFFD (ck/support/json_string.hpp), so the file is JSON.
std::string hf_json_text(const nlohmann::ordered_json& value, bool ensure_ascii);

}  // namespace ckplugin::hf
