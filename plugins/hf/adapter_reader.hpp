// A PEFT LoRA adapter folder (adapter_config.json + adapter_model.safetensors) read as
// llama.cpp's convert_lora_to_gguf.py converts it, with the base model's config.json for the
// architecture: the hf reader's adapter mode (docs/formats/lora.md). Its tensors are
// `<llama.cpp name>.lora_a` / `.lora_b` (adapter_plan.hpp), already in the converter's output
// type: the reader converts them itself, because the converter's types are not llama-quantize's
// (the quantize stage leaves tensors whose names do not end in "weight" alone) and an adapter has
// no general.file_type for a later stage to keep.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "adapter_plan.hpp"
#include "checkpoint.hpp"
#include "ck/context.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"

namespace ckplugin::hf {

// The hf reader's options for an adapter folder.
struct AdapterSettings {
    std::string base;             // base=: the base checkpoint's folder or its config.json
    std::string outtype = "f32";  // outtype=: f32, f16, bf16 or q8_0 (the converter's default: f32)
    // peft_scale: adapter.lora.alpha chosen so that llama.cpp's alpha / r is PEFT's scale
    // (for use_rslora, alpha * sqrt(r)) instead of the converter's lora_alpha.
    bool peft_scale = false;
    bool given = false;  // any of them given: an error for a checkpoint folder

    static AdapterSettings from(const ck::Options& options);
};

// Whether `path` is a PEFT adapter folder or its adapter_config.json.
bool is_adapter_folder(const std::filesystem::path& path);

class AdapterReader {
  public:
    AdapterReader(AdapterSettings settings, ck::Context& context)
        : settings_(std::move(settings)), context_(context) {}
    ck::ModelHeader open(const std::filesystem::path& path);
    // The tensor in its written type (adapters are small: whole tensors only).
    ck::TensorView tensor(std::size_t index) const;
    void verify() { weights_.verify(); }

  private:
    AdapterSettings settings_;
    ck::Context& context_;
    Checkpoint weights_;
    std::vector<AdapterTensor> plan_;
};

}  // namespace ckplugin::hf
