// BumpReader: maps a bump v3 file, reads config.json beside it when present, and presents the
// payload slots as the tensor directory (slot name, ggml type, shape, bytes, file offset).
// verify() recomputes the SHA-256 and checks the file against header, table and config.
#pragma once

#include <memory>
#include <optional>

#include "bump_format.hpp"
#include "bump_layout.hpp"
#include "ck/stage.hpp"
#include "ck/support/mapped_tensors.hpp"
#include "config_json.hpp"

namespace ckplugin::bump {
using namespace ck;

class BumpV4Reader;

// A BUMPWGT4 file is handed to BumpV4Reader: one reader for both versions.
class BumpReader final : public Reader {
  public:
    explicit BumpReader(Context& context);
    ~BumpReader() override;
    ModelHeader open(const std::filesystem::path& path) override;
    TensorView tensor(std::size_t index) override;
    void verify() override;

    const Header& header() const noexcept { return header_; }
    const std::vector<Slot>& slots() const noexcept { return slots_; }
    std::uint64_t payload_start() const noexcept { return payload_start_; }

  private:
    // The sections of open(), in file order.
    void read_header(const std::string& file);
    // The dtype table: one known code per slot. Sets payload_start_ and dtype_table_; returns
    // the slots' ggml types.
    std::vector<std::uint32_t> read_dtype_table(const std::string& file);
    // num_heads, head_dim and aligned_head_dim in range; sets geometry_ without the two values
    // the header lacks (num_key_value_heads, intermediate_size).
    void check_head_geometry(const std::string& file);
    // Those two, from config.json beside the file or inferred from the payload size; returns
    // where they came from, for messages and inspect.
    std::string find_kv_heads_and_ffn(const std::filesystem::path& path,
                                      std::span<const std::uint32_t> types, std::uint64_t payload);
    // The slots and their offsets, checked against the file size and the config.
    void lay_out_slots(std::span<const std::uint32_t> types, const std::string& geometry_source,
                       const std::string& file);
    std::vector<std::pair<std::string, std::string>> format_facts(
        const std::string& geometry_source) const;
    void check_config_against_header() const;

    Context& context_;
    std::unique_ptr<BumpV4Reader> v4_;  // set by open() for a BUMPWGT4 file
    std::filesystem::path path_;
    support::MappedTensors tensors_;  // the file and each slot's extent
    Header header_;
    std::vector<std::uint8_t> dtype_table_;
    std::optional<Config> config_;
    std::filesystem::path config_path_;
    Geometry geometry_;
    std::vector<Slot> slots_;
    std::uint64_t payload_start_ = 0;
    std::uint64_t expected_size_ = 0;
};

}  // namespace ckplugin::bump
