// GgufLiteWriter: writes GGUF-lite (header, metadata lines, descriptors, packed data), turning
// each upstream tensor into its planned dtype as it streams through: dequantized with the
// kernels a chunk at a time, then quantized to Q8/Q4, rounded to F16 or kept as F32.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ck/kernels/dequant.hpp"
#include "ck/stage.hpp"
#include "round_trip_check.hpp"
#include "tensor_plan.hpp"
#include "writer_report.hpp"

namespace ckplugin::gguflite {
using namespace ck;

class GgufLiteWriter final : public Writer {
  public:
    // Options: scheme=, keep=, schemes=FILE, report (see README.md). Usage errors surface here.
    // Dequantizes with the plugin's kernel table (the best this CPU runs, or what --isa allows).
    GgufLiteWriter(const Options& options, Context& context);
    ~GgufLiteWriter() override;

    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override { return {path_}; }
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    void finish() override;

    const std::vector<TensorPlan>& plans() const noexcept { return plans_; }

  private:
    void encode(const TensorPlan& plan, const TensorView& tensor);
    void encode_floats(const TensorPlan& plan, SourceValues& source, ConsumedPages& pages);
    void encode_quantized(const TensorPlan& plan, SourceValues& source, ConsumedPages& pages);
    void flush_output();

    Context& context_;
    const kernels::DequantTable& kernels_;
    SchemeRules rules_;
    bool report_ = false;
    std::filesystem::path path_;
    Metadata metadata_;
    std::vector<TensorPlan> plans_;
    std::vector<std::byte> preamble_;  // header, metadata and descriptors
    std::uint64_t data_start_ = 0;
    SizeTable sizes_;
    OutputFile* file_ = nullptr;
    std::size_t next_ = 0;
    std::unique_ptr<RoundTripCheck> check_;
};

}  // namespace ckplugin::gguflite
