// GGUF LoRA adapters (convert_lora_to_gguf.py's files, or ckhost convert-lora's) opened for a
// merge: each file read and validated by the SDK's GGUF reader, its keys checked as
// llama-export-lora checks them, its factors paired by the base tensor they change.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/model.hpp"
#include "gguf_reader.hpp"

namespace ckplugin::lora {

// One adapter of the merge, with the scale the user gave it.
class LoraAdapter {
  public:
    // Opens `path` and checks general.type (adapter), adapter.type (lora) and that its
    // general.architecture is `architecture`; throws ck::Error naming the key.
    LoraAdapter(std::string path, float user_scale, const std::string& architecture,
                ck::Context& context);

    const std::string& path() const noexcept { return path_; }
    // llama.cpp's scale for a factor pair of rank `rank`: user_scale * alpha / rank in float32,
    // or user_scale when the adapter states no alpha (llama_adapter_lora_weight::get_scale).
    float scale(std::int64_t rank) const;
    // The base tensor each pair of factors changes, with the factors' indices in the file.
    struct Pair {
        std::size_t a = 0, b = 0;
    };
    const std::map<std::string, Pair>& pairs() const noexcept { return pairs_; }
    const ck::TensorInfo& info(std::size_t index) const { return header_.tensors.at(index); }
    ck::TensorView tensor(std::size_t index) const { return reader_->tensor(index); }

  private:
    void pair_factors();

    std::string path_;
    float user_scale_;
    float alpha_ = 0;
    std::unique_ptr<ckplugin::gguf::GgufReader> reader_;
    ck::ModelHeader header_;
    std::map<std::string, Pair> pairs_;
};

// `scale=` as given (one value, or "{1,0.5}": ck/support/option_list.hpp) for `adapters`
// adapters; a missing scale is 1 for every adapter. Throws a usage error naming the option.
std::vector<float> scales_for(const std::string& value, std::size_t adapters);

}  // namespace ckplugin::lora
