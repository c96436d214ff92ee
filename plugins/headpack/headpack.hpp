// Headpack: pads every attention head of attn_q/k/v (and their biases) from hd to hd_a rows,
// hd_a = align_up(hd * 4 bytes, align) / 4, with all-zero rows, so that each head starts on an
// `align`-byte boundary of an FP32 activation buffer in C-Kernel-Engine. The padded head size
// reaches the writer through the planned header (metadata key aligned_head_dim_key).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "ck/stage.hpp"

namespace ckplugin::headpack {
using namespace ck;

class Headpack final : public Transform {
  public:
    // Reads the option align=N (bytes; a positive multiple of 4).
    explicit Headpack(const Options& options);

    ModelHeader plan(const ModelHeader& in) override;
    TensorView apply(std::size_t index, const Upstream& upstream) override;

    std::uint32_t aligned_head_dim() const noexcept { return aligned_head_dim_; }

  private:
    ModelHeader plan_padding(const ModelHeader& in);

    // How one tensor is padded: `heads` groups of `head_bytes`, each followed by `pad_bytes`
    // of zeros.
    struct Padding {
        std::uint32_t heads = 0;
        std::uint64_t head_bytes = 0;
        std::uint64_t pad_bytes = 0;
        std::uint64_t in_bytes = 0;
    };

    std::uint64_t align_ = 64;
    std::uint32_t aligned_head_dim_ = 0;
    ModelHeader in_;
    std::unordered_map<std::size_t, Padding> padded_;  // tensor index -> padding
};

}  // namespace ckplugin::headpack
