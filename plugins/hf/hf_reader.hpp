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
    // Copied and permuted tensors in any run of whole heads (Q/K) or rows; stacked experts in
    // whole experts, so a block is a slice of one expert's mapping or a copy of a few; widened
    // and generated tensors (norms, routers, rope factors: small) whole.
    std::uint64_t row_granule(std::size_t index) const override;
    ck::TensorView tensor_rows(std::size_t index, ck::RowRange rows) override;
    void verify() override { checkpoint_.verify(); }

  private:
    ck::Context& context_;
    Checkpoint checkpoint_;
    GeneratedTensors generated_;
    std::vector<PlannedTensor> plan_;
};

bool looks_like_checkpoint(const unsigned char* head, std::size_t size, const char* path);

}  // namespace ckplugin::hf
