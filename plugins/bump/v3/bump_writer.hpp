// BumpWriter: the bump v3 file (bump.md) and config.json beside it. prepare() runs every check
// of plan_model(); the payload is then streamed slot by slot, hashed (SHA-256, on a second
// thread) as it goes, and the 128-byte header is patched in last.
#pragma once

#include <memory>
#include <optional>

#include "bump_format.hpp"
#include "bump_model.hpp"
#include "ck/conventions/ckhost_keys.hpp"
#include "ck/conventions/output_bytes.hpp"
#include "ck/stage.hpp"
#include "hashed_payload.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpWriter final : public Writer {
  public:
    // Reads the options context=N, context_ok=1, strict=1, config=PATH (usage errors for bad
    // values).
    BumpWriter(const Options& options, Context& context);

    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override;
    std::vector<std::string> understood_keys() const override {
        return {std::string(conventions::aligned_head_dim_key)};
    }
    std::vector<std::size_t> order() const override;
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    void finish() override;

    const ModelPlan& plan() const noexcept { return plan_; }

  private:
    void emit_zero_slots();  // the zero slots before the next tensor (or the end)
    void check_tied_output(const TensorView& token_embd);
    void report_untied(const std::string& reason);
    void check_position_embeddings();

    Context& context_;
    std::optional<std::uint32_t> context_length_;
    bool strict_ = false;
    bool context_ok_ = false;
    std::optional<std::filesystem::path> config_override_;

    ModelHeader header_;
    ModelPlan plan_;
    std::filesystem::path bump_path_;
    std::filesystem::path config_path_;
    std::vector<std::byte> table_bytes_;  // u32 N + dtype table, hashed with the payload

    std::size_t slot_ = 0;   // next slot to fill
    std::size_t piece_ = 0;  // next tensor within that slot
    std::optional<Digest> output_weight_digest_;
    // Last member: its hasher is destroyed (joined) first, while everything it may still read
    // is alive.
    HashedPayload payload_;
};

}  // namespace ckplugin::bump
