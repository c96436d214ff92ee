// GgufSplitWriter: the gguf writer with split_max_size or split_max_tensors. Writes a llama.cpp
// split set (PREFIX-00001-of-0000N.gguf ...) byte-identical to `llama-gguf-split --split` (with
// split_counts, to the shards of `llama-quantize --keep-split`),
// each shard through its own GgufWriter, streaming: tensors arrive one at a time in header
// order and go straight to their shard.
#pragma once

#include <memory>

#include "ck/stage.hpp"
#include "gguf_split_plan.hpp"

namespace ckplugin::gguf {
using namespace ck;

class GgufSplitWriter final : public Writer {
  public:
    GgufSplitWriter(SplitSettings settings, const Options& options, Context& context)
        : settings_(settings), options_(options), context_(context) {}
    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override;
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    void finish() override;

  private:
    struct Shard {
        ShardRange range;
        std::filesystem::path path;
        std::unique_ptr<Writer> writer;  // a GgufWriter for this shard's file
        OutputFile* file = nullptr;      // the file it created in begin()
    };
    // Finishes shard `k`'s writer and file once its last tensor is written.
    void complete(std::size_t k);

    SplitSettings settings_;
    Options options_;  // passed on to each shard's GgufWriter
    Context& context_;
    std::vector<Shard> shards_;
    std::size_t current_ = 0;  // the shard write() fills now; those before it are complete
};

// The gguf plugin's writer factory: a GgufSplitWriter when a split option is given, else a
// GgufWriter. Option errors are usage errors, raised before anything is read.
Writer* create_gguf_writer(const Options& options, Context& context);

}  // namespace ckplugin::gguf
