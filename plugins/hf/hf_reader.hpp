// HfReader: a Hugging Face checkpoint folder (or its config.json) read as llama.cpp's
// convert_hf_to_gguf.py reads it: tensors renamed to llama.cpp's names, attn_q/attn_k rows
// permuted out of the rotary layout, 1-D tensors widened to F32, general.* and <arch>.* keys
// from the folder and config.json, the tokenizer from tokenizer.model.
#pragma once

#include <vector>

#include "checkpoint.hpp"
#include "ck/stage.hpp"

namespace ckplugin::hf {

class HfReader final : public ck::Reader {
  public:
    explicit HfReader(ck::Context& context) : context_(context) {}
    ck::ModelHeader open(const std::filesystem::path& path) override;
    ck::TensorView tensor(std::size_t index) override;
    void verify() override { checkpoint_.verify(); }

    // What tensor() does to the stored bytes.
    struct Source {
        StoredTensor stored;
        enum class Action { copy, permute_rows, widen_to_f32 } action = Action::copy;
        std::int64_t heads = 0;  // permute_rows: heads of the projection
    };

  private:
    ck::Context& context_;
    Checkpoint checkpoint_;
    std::vector<Source> sources_;
};

bool looks_like_checkpoint(const unsigned char* head, std::size_t size, const char* path);

}  // namespace ckplugin::hf
