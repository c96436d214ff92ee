// GgufReader: maps a GGUF file, validates everything gguf.md lists, and hands out tensor bytes
// as views into the mapping (converted little-endian copies for a big-endian file).
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ck/error.hpp"
#include "ck/stage.hpp"
#include "ck/support/mapped_tensors.hpp"

namespace ckplugin::gguf {
using namespace ck;

// One GGUF file read and validated on its own (a shard of a split set is one such file).
struct ParsedGguf {
    ModelHeader header;
    support::MappedTensors tensors;
    std::uint64_t data_start = 0;
    std::uint64_t file_size = 0;
    bool big_endian = false;        // fields and tensor data stored big-endian
    std::optional<Error> trailing;  // bytes after the last tensor (ggml ignores them)
};
ParsedGguf parse_gguf_file(const std::filesystem::path& path, Context& context,
                           ModelHeader* read_before_failure = nullptr);

// Reads a GGUF file, or the whole llama-gguf-split set a shard belongs to (gguf_split_set.hpp),
// as one model.
class GgufReader final : public Reader {
  public:
    explicit GgufReader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    TensorView tensor(std::size_t index) override;
    // Any rows: a slice of the mapping (converted when the file is big-endian).
    std::uint64_t row_granule(std::size_t) const override { return 1; }
    TensorView tensor_rows(std::size_t index, RowRange rows) override;
    // Fails on bytes after the last tensor, as the safetensors reader does (open() warns).
    void verify() override;
    // The opened file's facts, keys and tensor infos up to the problem that made open() fail
    // (nothing when the failure was in another shard of its set).
    ModelHeader read_before_failure() const override { return read_before_failure_; }

    // Where the (first) file's data section starts.
    std::uint64_t data_start() const noexcept { return data_start_; }

  private:
    Context& context_;
    std::vector<support::MappedTensors> shards_;  // one per file: a single file, or a set
    // Tensor i of the header handed out: which shard, its index there, and whether its bytes
    // need converting from big-endian (by its type's rule) or are handed out as mapped.
    struct Location {
        std::size_t shard = 0;
        std::size_t local = 0;
        std::uint32_t type = 0;
        std::uint64_t row_bytes = 0;
        bool big_endian = false;
    };
    const Location& location(std::size_t index) const;
    std::vector<Location> locations_;
    std::uint64_t data_start_ = 0;
    std::vector<Error> trailing_;  // bytes after the last tensor of any file, for verify()
    ModelHeader read_before_failure_;
};

// Does the file start with the GGUF magic? (The descriptor's probe; `path` is not used.)
bool looks_like_gguf(const unsigned char* head, std::size_t size, const char* path = nullptr);

}  // namespace ckplugin::gguf
