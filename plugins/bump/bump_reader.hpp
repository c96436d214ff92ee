// BumpReader: maps a bump v3 file, reads config.json beside it when present, and presents the
// payload slots as the tensor directory (slot name, ggml type, shape, bytes, file offset).
// verify() recomputes the SHA-256 and checks the file against header, table and config.
#pragma once

#include <memory>
#include <optional>

#include "bump_format.hpp"
#include "bump_layout.hpp"
#include "ck/mapped_file.hpp"
#include "ck/stage.hpp"
#include "config_json.hpp"

namespace ck::bump {

class BumpReader final : public Reader {
  public:
    explicit BumpReader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    TensorView tensor(std::size_t index) override;
    void verify() override;

    const Header& header() const noexcept { return header_; }
    const std::vector<Slot>& slots() const noexcept { return slots_; }
    std::uint64_t payload_start() const noexcept { return payload_start_; }

  private:
    void check_config_against_header() const;

    Context& context_;
    std::filesystem::path path_;
    std::shared_ptr<const MappedFile> mapping_;
    Header header_;
    std::vector<std::uint8_t> dtype_table_;
    std::optional<Config> config_;
    std::filesystem::path config_path_;
    Geometry geometry_;
    std::vector<Slot> slots_;
    std::vector<std::uint64_t> offsets_;  // absolute file offset of each slot
    std::uint64_t payload_start_ = 0;
    std::uint64_t expected_size_ = 0;
};

}  // namespace ck::bump
