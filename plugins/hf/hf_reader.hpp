// HfReader: a Hugging Face checkpoint folder (or its config.json) read as llama.cpp's
// convert_hf_to_gguf.py reads it. The model family's description (architectures.cpp) says
// which tensors it becomes and how (tensor_plan.cpp), which keys config.json gives
// (model_keys.cpp) and which tensors are generated (generated_tensors.cpp); this file opens the
// folder, puts the header together and hands out each tensor's bytes.
#pragma once

#include <vector>

#include "checkpoint.hpp"
#include "ck/stage.hpp"
#include "generated_tensors.hpp"
#include "tensor_plan.hpp"

namespace ckplugin::hf {

class HfReader final : public ck::Reader {
  public:
    explicit HfReader(ck::Context& context) : context_(context) {}
    ck::ModelHeader open(const std::filesystem::path& path) override;
    ck::TensorView tensor(std::size_t index) override;
    void verify() override { checkpoint_.verify(); }

  private:
    ck::Context& context_;
    Checkpoint checkpoint_;
    GeneratedTensors generated_;
    std::vector<PlannedTensor> plan_;
};

bool looks_like_checkpoint(const unsigned char* head, std::size_t size, const char* path);

}  // namespace ckplugin::hf
