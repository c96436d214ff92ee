// The quantize transform (`quantize[to=TYPE | mix=NAME, ...]`), outside the plugin's descriptor
// so that tests drive it in process. plugin.cpp declares its options and exports it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "ck/options.hpp"
#include "ck/stage.hpp"
#include "ck/tensor_filter.hpp"
#include "importance_matrix.hpp"
#include "layer_pruning.hpp"
#include "mixture.hpp"

namespace ckplugin::quantize {

// What `to=` accepts: every type there is a quantizer for, and F32.
inline constexpr const char* target_choices =
    "q4_0|q4_1|q5_0|q5_1|q8_0|q2_k|q3_k|q4_k|q5_k|q6_k|iq4_nl|iq4_xs|iq3_s|iq3_xxs|iq2_s|iq2_xs|"
    "iq2_xxs|iq1_m|iq1_s|tq1_0|tq2_0|f16|bf16|f32";

class Quantize final : public ck::Transform {
  public:
    Quantize(const ck::Options& options, ck::Context& context);
    ck::ModelHeader plan(const ck::ModelHeader& in) override;
    ck::TensorView apply(std::size_t index, const ck::Upstream& upstream) override;
    // Rows are quantized independently: any run of rows.
    std::uint64_t row_granule(std::size_t index,
                              const ck::UpstreamGranule& upstream) const override;
    ck::TensorView apply_rows(std::size_t index, ck::RowRange rows,
                              const ck::UpstreamRows& upstream) override;

  private:
    // imatrix=, include_weights=, exclude_weights=, prune_layers=.
    void read_importance_options(const ck::Options& options);

    // One tensor's conversion: its rows widened to f32, then written as `to`.
    struct Job {
        std::uint32_t from;  // the input type, widened to f32 row by row
        std::uint32_t to;
        std::uint64_t row_length;
        std::uint64_t rows;
        ck::kernels::QuantizeRowFn quantize;  // without importance weights
        // With an importance matrix entry: the weighted quantizer and the entry (one weight per
        // column, expert after expert: rows of expert e use weights[e * row_length ...]).
        ck::kernels::WeightedQuantizeRowFn weighted = nullptr;
        const ImportanceMatrix::Entry* importance = nullptr;
        std::uint64_t rows_per_expert = 0;
    };

    // The input index of output tensor `index`.
    std::size_t source_of(std::size_t index) const {
        return source_.empty() ? index : source_.at(index);
    }
    // `rows` rows of `in` (a whole tensor or a row block of it, from row `first`) as `job`
    // says.
    static ck::TensorView quantize_rows(const Job& job, const ck::TensorView& in,
                                        std::uint64_t first, std::uint64_t rows);
    // The input index of tensor `i` of the planned (possibly pruned) model.
    std::size_t input_of(std::size_t i) const { return pruned_ ? pruned_->kept.at(i) : i; }
    // The importance weights tensor i (of the planned model) is quantized to `to` with, or
    // nullptr; appends why to `rule`, and refuses what llama-quantize refuses.
    const ImportanceMatrix::Entry* importance_for(const ck::ModelHeader& in, std::size_t i,
                                                  std::uint32_t to, bool required,
                                                  std::string& rule) const;
    // The imatrix keys llama-quantize appends (quantize.imatrix.*), and --prune-layers' count.
    void add_run_keys(ck::ModelHeader& out) const;
    // to=TYPE: plans tensor i of `in` (TYPE, or llama.cpp's fallback type for its rows) and
    // returns the rule that decided.
    std::string plan_one_type(const ck::ModelHeader& in, std::size_t i);
    // Plans tensor i of `in` to become `to`, or leaves it (rule says why) when it cannot.
    void plan_tensor(const ck::ModelHeader& in, std::size_t i, std::uint32_t to,
                     bool requires_importance, std::string& rule);
    // The "quantize" report (each tensor's types, rule and sizes; bits per weight),
    // and each tensor's rule as its reason (Context::explain), which --dry-run prints.
    void report(const ck::ModelHeader& in, const ck::ModelHeader& out,
                const std::vector<std::string>& rules, std::optional<std::uint32_t> file_type);
    // Gives `out` llama-quantize's layout: no split.* key, general.quantization_version and
    // general.file_type last, as its gguf_set_* calls leave them, and with order=llama (not
    // keep_split) its tensors in llama.cpp's loader order, recording which input tensor each
    // output index is.
    void use_llama_layout(ck::ModelHeader& out, std::optional<std::uint32_t> file_type);

    ck::TensorFilter filter_;
    ck::Context& context_;
    bool requantize_;
    bool keep_quantized_;
    std::optional<MixSettings> settings_;   // mix=NAME
    std::uint32_t target_ = 0;              // to=TYPE
    std::vector<std::optional<Job>> jobs_;  // by input index
    bool llama_order_ = false;              // order=llama: llama.cpp's loader order
    bool llama_keys_ = false;               // order=llama or keep_split: the file type keys last
    std::vector<std::size_t> source_;       // input index of each output index (order=llama)

    std::optional<ImportanceMatrix> imatrix_;  // imatrix=FILE, filtered by include/exclude
    std::string imatrix_argument_;             // as given, for quantize.imatrix.file
    std::vector<int> prune_list_;              // prune_layers=
    std::optional<PrunedModel> pruned_;        // the model planned, when layers are pruned
};

}  // namespace ckplugin::quantize
