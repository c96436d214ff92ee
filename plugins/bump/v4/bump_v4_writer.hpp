// BumpV4Writer: `bump[version=4]`, the bump v4 file (docs/formats/bump-v4.md) and its
// weights_manifest.json, weights_map.json and config.json. prepare() runs every check of
// v4::plan(); the JSON files are known before any tensor byte (the manifest's offsets come
// from the plan), the payload is streamed piece by piece: K-quant rows straight from the
// input mapping, every other weight dequantized a block of rows at a time.
#pragma once

#include <memory>
#include <optional>

#include "bump_v4.hpp"
#include "ck/conventions/ckhost_keys.hpp"
#include "ck/stage.hpp"
#include "hashed_payload.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpV4Writer final : public Writer {
  public:
    // Reads the options context=N, config=PATH, manifest=PATH, map=PATH.
    BumpV4Writer(const Options& options, Context& context);

    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override;
    std::vector<std::string> understood_keys() const override {
        return {std::string(conventions::aligned_head_dim_key)};
    }
    std::vector<std::size_t> order() const override;
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    void finish() override;

    const v4::Plan& plan() const noexcept { return plan_; }

  private:
    void copy_rows(const v4::Piece& piece, const TensorView& tensor);
    void dequantize_rows(const v4::Piece& piece, const TensorView& tensor);
    void dequantize_wo(const v4::Piece& piece, const TensorView& tensor);
    std::span<std::byte> next_buffer(std::size_t bytes);

    Context& context_;
    std::optional<std::uint32_t> context_length_;
    std::optional<std::filesystem::path> config_override_, manifest_override_, map_override_;

    ModelHeader header_;
    v4::Plan plan_;
    std::filesystem::path bump_path_, config_path_, manifest_path_, map_path_;
    std::vector<std::byte> table_bytes_;  // u32 N + dtype table, hashed with the payload

    std::size_t entry_ = 0;  // next entry to fill
    std::size_t piece_ = 0;  // next piece within that entry
    // Two output buffers, alternated so that one is hashed while the other is filled.
    std::vector<std::byte> buffers_[2];
    int current_ = 0;
    std::vector<float> rows_;  // dequantized source rows, when they need padding or reordering
    // Last member: its hasher is destroyed (joined) first, while the buffers it may still read
    // are alive.
    HashedPayload payload_;
};

}  // namespace ckplugin::bump
