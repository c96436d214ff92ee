// PEFT adapter folders in a `lora` stage (`hf:lora[adapter=my-adapter/]:gguf`): the lora plugin
// merges GGUF adapters only, and plugins never share code, so the host, which loads both, joins
// them (docs/decisions/0062-peft-adapters-in-lora.md). Before the stage plans, each folder is
// converted by the hf reader's adapter mode (`hf[base=BASE,outtype=f32,peft_scale]:gguf`: F32
// holds BF16, F16 and F32 factors exactly, and peft_scale makes llama.cpp's alpha / r PEFT's
// scale under use_rslora) into a private temporary folder, and the stage is given those files.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "ck/context.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost {

// Whether `path` names a PEFT adapter: a folder holding adapter_config.json, or that file.
bool is_peft_adapter(const std::filesystem::path& path);

// The conversions of one pipeline, removed with it.
class ConvertedAdapters {
  public:
    ConvertedAdapters() = default;
    ConvertedAdapters(const ConvertedAdapters&) = delete;
    ConvertedAdapters& operator=(const ConvertedAdapters&) = delete;
    ~ConvertedAdapters();

    // A lora stage's options with every PEFT adapter of `adapter=` replaced by its GGUF
    // conversion, or nothing when it names none. The base model's config.json comes from the
    // stage's `base=`, else `checkpoint` (the pipeline's input when the hf reader reads a
    // folder), else the adapter's base_model_name_or_path (the hf reader's rule). Each folder is
    // converted once; the conversion's warnings go to `context`.
    std::optional<std::map<std::string, std::string>> rewrite(
        PluginRegistry& registry, const std::map<std::string, std::string>& options,
        const std::optional<std::filesystem::path>& checkpoint, ck::Context& context);

  private:
    std::filesystem::path convert(PluginRegistry& registry, const std::filesystem::path& adapter,
                                  const std::string& base, ck::Context& context);

    std::filesystem::path folder_;                       // made on the first conversion
    std::map<std::string, std::filesystem::path> done_;  // adapter as written -> its GGUF
};

}  // namespace ckhost
