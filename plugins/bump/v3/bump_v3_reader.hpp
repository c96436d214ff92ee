// BumpV3Reader: maps a bump v3 file, reads config.json beside it when present, and presents the
// payload slots as the tensor directory (slot name, ggml type, shape, bytes, file offset).
// verify() recomputes the SHA-256 and checks the file against header, table and config.
// BumpReader (bump_versions.hpp) hands it the BUMPWGT3 files.
#pragma once

#include <optional>

#include "bump_file_reader.hpp"
#include "bump_format.hpp"
#include "bump_layout.hpp"
#include "ck/stage.hpp"
#include "config_json.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpV3Reader final : public BumpFileReader {
  public:
    explicit BumpV3Reader(Context& context) : BumpFileReader(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    void verify() override;

    const Header& header() const noexcept { return header_; }
    const std::vector<Slot>& slots() const noexcept { return slots_; }

  private:
    // The sections of open(), in file order.
    // The dtype table: one known code per slot; returns the slots' ggml types.
    std::vector<std::uint32_t> read_dtype_table();
    // num_heads, head_dim and aligned_head_dim in range; sets geometry_ without the two values
    // the header lacks (num_key_value_heads, intermediate_size).
    void check_head_geometry();
    // Those two, from config.json beside the file or inferred from the payload size; returns
    // where they came from, for messages and inspect.
    std::string find_kv_heads_and_ffn(std::span<const std::uint32_t> types);
    // The slots and their offsets, checked against the file size and the config.
    void lay_out_slots(std::span<const std::uint32_t> types, const std::string& geometry_source);
    Facts format_facts(const std::string& geometry_source) const;
    void check_config_against_header() const;

    Header header_;
    std::optional<Config> config_;
    std::filesystem::path config_path_;
    Geometry geometry_;
    std::vector<Slot> slots_;
};

}  // namespace ckplugin::bump
