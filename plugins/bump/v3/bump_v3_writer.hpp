// BumpV3Writer: the bump v3 file (bump.md) and config.json beside it. prepare() runs every check
// of plan_model(); the payload is then streamed slot by slot, hashed (SHA-256, on a second
// thread) as it goes, and the 128-byte header is patched in last.
#pragma once

#include <optional>

#include "bump_format.hpp"
#include "bump_model.hpp"
#include "payload_writer.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpV3Writer final : public PayloadWriter {
  public:
    // Reads the options context=N, context_ok=1, strict=1, config=PATH (usage errors for bad
    // values).
    BumpV3Writer(const Options& options, Context& context);

    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override;
    std::vector<std::size_t> order() const override;
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    void finish() override;

    const ModelPlan& plan() const noexcept { return plan_; }

  private:
    void emit_zero_slots();  // the zero slots before the next tensor (or the end)
    void check_tied_output(const TensorView& token_embd);
    void refuse_or_report_untied(const std::string& reason);
    void check_position_embeddings();

    const bool strict_ = false;
    const bool context_ok_ = false;
    ModelPlan plan_;
    std::size_t slot_ = 0;   // next slot to fill
    std::size_t piece_ = 0;  // next tensor within that slot
    std::optional<Digest> output_weight_digest_;
};

}  // namespace ckplugin::bump
