// The lora transform (`lora[adapter=PATH,scale=S,to=TYPE,export_lora]`): one or several GGUF
// LoRA adapters merged into the weights they change as the model streams, W' = W + sum_i
// scale_i * (alpha_i / r_i) * B_i A_i in float32 exactly as llama-export-lora computes it (the
// kernels' ck/kernels/lora.hpp), row block by row block. plugin.cpp declares its options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/kernels/lora.hpp"
#include "ck/options.hpp"
#include "ck/stage.hpp"
#include "lora_adapters.hpp"

namespace ckplugin::lora {

class Lora final : public ck::Transform {
  public:
    Lora(const ck::Options& options, ck::Context& context);
    // Opens the adapters and checks them against the base before anything is written: the
    // architecture, every factor's base tensor and shapes, the same tensors in every adapter.
    ck::ModelHeader plan(const ck::ModelHeader& in) override;
    ck::TensorView apply(std::size_t index, const ck::Upstream& upstream) override;
    // Every row of a weight merges on its own: any run of rows (of whole experts' rows, too).
    std::uint64_t row_granule(std::size_t index,
                              const ck::UpstreamGranule& upstream) const override {
        return upstream(source_.at(index));
    }
    ck::TensorView apply_rows(std::size_t index, ck::RowRange rows,
                              const ck::UpstreamRows& upstream) override;

  private:
    // One adapter's factors of a weight.
    struct Term {
        std::size_t adapter = 0;
        std::size_t by_row = 0, by_column = 0;  // the factors' indices in the adapter (lora.hpp)
        std::int64_t rank = 0;
        float scale = 1;
        ck::kernels::LoraSum sum = ck::kernels::LoraSum::in_order;
    };
    // A weight that adapters change: [matrices x] rows x columns.
    struct Merge {
        std::uint32_t from = 0, to = 0;  // the base's type, the result's
        std::int64_t columns = 0, rows = 0, matrices = 1;
        bool embedding = false;  // token_embd: lora_a stored transposed
        std::vector<Term> terms;
        std::string name;
    };

    void open_adapters(const ck::ModelHeader& in);
    std::optional<Merge> plan_merge(const ck::ModelHeader& in, std::size_t index) const;
    void check_pair(const Merge& m, const LoraAdapter& adapter,
                    const LoraAdapter::Pair& pair) const;
    std::uint32_t merged_type(std::uint32_t base) const;
    // Each term's factors as F32 for rows [first_row, first_row + rows) of matrix `matrix`:
    // lora.hpp's by_row (those rows) and by_column (the whole matrix's).
    struct TermFactors {
        std::vector<float> by_row, by_column;
    };
    std::vector<TermFactors> factors_for(const Merge& m, std::uint64_t matrix,
                                         std::uint64_t first_row, std::uint64_t rows) const;
    void merge_matrix_rows(const Merge& m, std::uint64_t first, std::uint64_t count,
                           const std::byte* in, std::byte* out) const;
    ck::TensorView merged(const Merge& m, const ck::TensorView& in, ck::RowRange rows) const;

    ck::Context& context_;
    std::vector<std::string> paths_;
    std::vector<float> user_scales_;
    std::string to_;
    bool export_lora_ = false;
    std::vector<LoraAdapter> adapters_;
    std::vector<std::optional<Merge>> merges_;  // by input tensor
    std::vector<std::size_t> source_;           // the input tensor of each output tensor
};

}  // namespace ckplugin::lora
