// BumpV4Writer: `bump[version=4]`, the bump v4 file (docs/formats/bump-v4.md) and its
// weights_manifest.json, weights_map.json and config.json. prepare() runs every check of
// v4::plan(); the JSON files are known before any tensor byte (the manifest's offsets come
// from the plan), the payload is streamed piece by piece: K-quant rows straight from the
// input mapping, every other weight dequantized a block of rows at a time.
#pragma once

#include <optional>
#include <vector>

#include "bump_v4.hpp"
#include "payload_writer.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpV4Writer final : public PayloadWriter {
  public:
    // Reads the options context=N, config=PATH, manifest=PATH, map=PATH,
    // weights_path=given|relative.
    BumpV4Writer(const Options& options, Context& context);

    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override;
    std::vector<std::size_t> order() const override;
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    void finish() override;

    const v4::Plan& plan() const noexcept { return plan_; }

  private:
    void copy_rows(const v4::Piece& piece, const TensorView& tensor);
    void dequantize_rows(const v4::Piece& piece, const TensorView& tensor);
    void dequantize_wo(const v4::Piece& piece, const TensorView& tensor);

    // The manifest's weights_path: the bump path as given (the reference's form), or relative
    // to the manifest's folder (weights_path=relative), which stays true when the folder moves.
    std::string manifest_weights_path() const;

    const std::optional<std::filesystem::path> manifest_override_, map_override_;
    const bool relative_weights_path_;
    v4::Plan plan_;
    std::filesystem::path manifest_path_, map_path_;
    std::string manifest_text_;  // known in prepare(), written in begin()
    std::size_t entry_ = 0;      // next entry to fill
    std::size_t piece_ = 0;      // next piece within that entry
    std::vector<float> rows_;    // dequantized source rows, when they need padding or reordering
};

}  // namespace ckplugin::bump
