// HfWriter: a GGUF model back to a Hugging Face checkpoint folder, the exact inverse of the hf
// reader. -o is the folder; it gets config.json and generation_config.json (export_config.cpp),
// the tokenizer files (export_tokenizer.cpp), and the weights in safetensors with Hugging Face
// names and layout (export_tensors.cpp), sharded as save_pretrained shards them
// (export_shards.cpp). Weights come in row blocks and leave converted, a bounded piece at a time.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ck/options.hpp"
#include "ck/stage.hpp"
#include "export_config.hpp"
#include "export_shards.hpp"
#include "export_tensors.hpp"
#include "export_tokenizer.hpp"

namespace ckplugin::hf {

class HfWriter final : public ck::Writer {
  public:
    // Options: dtype=bf16|f16|f32, max_shard_size (default 5GB), class. A bad value is a usage
    // error, raised here, before anything is read.
    HfWriter(const ck::Options& options, ck::Context& context);
    void prepare(const ck::ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override;
    // The generated tensors first (config.json needs their values), then the weights in the
    // GGUF's order.
    std::vector<std::size_t> order() const override { return order_; }
    void begin(ck::OutputSink& out) override;
    void write(std::size_t index, const ck::TensorView& tensor) override;
    // Any rows: q/k blocks cut inside a head wait in a carry of less than one head.
    bool writes_rows() const override { return true; }
    void write_rows(std::size_t index, ck::RowRange rows, const ck::TensorView& block) override;
    void finish() override;

  private:
    std::uint32_t choose_dtype(const ck::ModelHeader& header) const;
    void plan_weights();
    void check_folder() const;
    void state_sizes() const;
    void write_config();
    void take(std::size_t index, ck::RowRange rows, const ck::TensorView& block);
    void take_heads(const TensorExport& e, const ck::TensorInfo& t, const ck::TensorView& block,
                    std::uint64_t rows);
    void emit(const TensorExport& e, const ck::TensorInfo& t, const ck::TensorView& rows_in,
              std::uint64_t rows);
    void collect_generated(const ck::TensorInfo& t, const ck::TensorView& block,
                           std::uint64_t rows);
    std::span<std::byte> scratch(std::size_t bytes);

    ck::Context& context_;
    // Options.
    std::string requested_class_;
    std::optional<std::uint32_t> requested_dtype_;
    std::uint64_t max_shard_bytes_;

    // Fixed by prepare().
    std::filesystem::path folder_;
    ExportTarget target_;
    std::uint32_t dtype_ = 0;
    std::vector<ck::TensorInfo> tensors_;  // the GGUF's, by index
    std::vector<TensorExport> plan_;       // by GGUF index
    std::vector<std::size_t> order_;
    std::size_t generated_count_ = 0;
    std::string config_text_;  // final unless there are generated tensors
    // With generated tensors: the header for config.json, its vocabulary arrays left out.
    std::optional<ck::ModelHeader> header_;
    std::vector<ExportedFile> files_;  // generation_config.json, the tokenizer files
    ShardLayout shards_;

    // While writing.
    ck::OutputFile* config_file_ = nullptr;
    ShardStream stream_;
    std::size_t next_ = 0;        // position in order_
    std::uint64_t next_row_ = 0;  // of that tensor
    GeneratedValues generated_;
    std::size_t generated_left_ = 0;
    std::vector<std::byte> carry_;  // q/k rows short of a whole head, as the GGUF stores them
    std::uint64_t carry_rows_ = 0;
    ck::TensorAllocation scratch_;
};

}  // namespace ckplugin::hf
