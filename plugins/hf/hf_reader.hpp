// HfReader: a Hugging Face checkpoint folder (or its config.json) read as llama.cpp's
// convert_hf_to_gguf.py reads it. The model family's description (architectures.cpp) says
// which tensors it becomes and how (tensor_plan.cpp), which keys config.json gives
// (model_keys.cpp) and which tensors are generated (generated_tensors.cpp); this file opens the
// folder, puts the header together and hands out each tensor's bytes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapter_reader.hpp"
#include "architectures.hpp"
#include "checkpoint.hpp"
#include "ck/options.hpp"
#include "ck/stage.hpp"
#include "generated_tensors.hpp"
#include "hf_config.hpp"
#include "tensor_plan.hpp"

namespace ckplugin::hf {

class HfReader final : public ck::Reader {
  public:
    explicit HfReader(ck::Context& context) : context_(context) {}
    // base= and outtype= are a PEFT adapter folder's (adapter_reader.hpp).
    HfReader(const ck::Options& options, ck::Context& context);
    // A checkpoint folder (or its config.json); a PEFT LoRA adapter folder (or its
    // adapter_config.json) is read by the AdapterReader instead.
    ck::ModelHeader open(const std::filesystem::path& path) override;
    ck::TensorView tensor(std::size_t index) override;
    // Copied and permuted tensors in any run of whole heads (Q/K) or rows; stacked experts in
    // whole experts, so a block is a slice of one expert's mapping or a copy of a few; widened
    // and generated tensors (norms, routers, rope factors: small) whole.
    std::uint64_t row_granule(std::size_t index) const override;
    ck::TensorView tensor_rows(std::size_t index, ck::RowRange rows) override;
    void verify() override { adapter_ ? adapter_->verify() : checkpoint_.verify(); }

  private:
    ck::Context& context_;
    AdapterSettings adapter_settings_;
    std::unique_ptr<AdapterReader> adapter_;  // set by open() for an adapter folder
    Checkpoint checkpoint_;
    GeneratedTensors generated_;
    std::vector<PlannedTensor> plan_;
};

bool looks_like_checkpoint(const unsigned char* head, std::size_t size, const char* path);

// config.json of `path` (a file), parsed; throws ck::Error naming it when it is missing or not
// a JSON object.
nlohmann::ordered_json read_config(const std::filesystem::path& path);
// config.json's "architectures"[0]; throws naming the key when there is none.
std::string class_of(const Hparams& hp);
// The family of class `name`; throws naming the key for a multimodal, unknown or refused class.
// `folder` (the checkpoint's) is one of the hints that name a refused variant.
const Architecture& architecture_of(const std::string& name, const Hparams& hp,
                                    const std::filesystem::path& folder);

}  // namespace ckplugin::hf
