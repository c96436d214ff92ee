// BumpFileReader: what the readers of both versions do alike with the file: map it, check that
// the header and the dtype table are there, read the table's codes (each version says which it
// accepts), place the entries back to back after the table and hand them out as file-backed
// views, state the table's facts for inspect, and in verify() the checks that do not depend on
// the version (trailing bytes, model type and heads, reserved bytes, the checksum).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ck/context.hpp"
#include "ck/model.hpp"
#include "ck/stage.hpp"
#include "ck/support/mapped_tensors.hpp"
#include "fixed_header.hpp"

namespace ckplugin::bump {

using Facts = std::vector<std::pair<std::string, std::string>>;

class BumpFileReader : public ck::Reader {
  public:
    ck::TensorView tensor(std::size_t index) override { return tensors_.view(index); }
    std::uint64_t payload_start() const noexcept { return payload_start_; }

  protected:
    explicit BumpFileReader(ck::Context& context) : context_(context) {}

    // Maps `path`; ck::Error when its magic is not that of `version` (3 or 4), or it ends
    // inside the header or the table count. Returns the header's bytes.
    std::span<const std::byte, header_bytes> map_file(const std::filesystem::path& path,
                                                      std::uint32_t version);
    const std::filesystem::path& path() const noexcept { return path_; }
    const std::string& name() const noexcept { return name_; }  // for messages
    std::uint64_t file_size() const { return tensors_.file().size(); }
    // "version N, expected V" at the version field.
    void expect_version(std::uint32_t found, std::uint32_t expected) const;

    // The dtype table's entry count (the u32 after the header), for the version to check.
    std::uint64_t table_count() const;
    // Reads `count` codes; `refusal(code, i)` says why entry i cannot hold `code`, or "" when it
    // can. `subject(i)` names entry i in the error (may be empty).
    void read_table(std::uint64_t count,
                    const std::function<std::string(std::uint8_t, std::size_t)>& refusal,
                    const std::function<std::string(std::size_t)>& subject);
    const std::vector<std::uint8_t>& dtype_table() const noexcept { return table_; }

    // Places the entries (name, type, shape, bytes) back to back from the end of the table and
    // sets their offsets. ck::Error when the file is shorter than `described_by` says
    // (truncated), a warning when it is longer.
    void place_entries(std::vector<ck::TensorInfo> entries, const std::string& described_by,
                       std::string_view unit);
    const std::vector<ck::TensorInfo>& entries() const noexcept { return entries_; }
    std::uint64_t payload_end() const noexcept { return payload_end_; }
    // What open() returns: the entries as the tensor directory, and `facts`.
    ck::ModelHeader model_header(Facts facts) const;

    // The table's place and size, the entries per dtype, the payload start and the file size:
    // one value per fact (inspect --json types them).
    Facts table_facts() const;

    // verify(): no bytes after the last entry, the header's bytes from `reserved_from` zero, and
    // the SHA-256 of bytes 128 to the end equal to `stated` (which lies at `checksum_at`).
    void expect_no_trailing_bytes(std::string_view unit) const;
    // model_type 1 (llama) and num_heads * head_dim == embed_dim, which both runtimes assume.
    void expect_llama_heads(std::uint32_t model_type, std::uint32_t num_heads,
                            std::uint32_t head_dim, std::uint32_t embed_dim) const;
    void expect_reserved_zero(std::size_t reserved_from) const;
    void expect_checksum(const Digest& stated, std::size_t checksum_at) const;

    ck::Context& context_;

  private:
    std::filesystem::path path_;
    std::string name_;
    ck::support::MappedTensors tensors_;  // the file and each entry's extent
    std::vector<std::uint8_t> table_;
    std::vector<ck::TensorInfo> entries_;
    std::uint64_t payload_start_ = 0;
    std::uint64_t payload_end_ = 0;
};

}  // namespace ckplugin::bump
