// GgufReader: maps a GGUF file, validates everything gguf.md lists, and hands out tensor bytes
// as views into the mapping.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "ck/stage.hpp"
#include "ck/support/mapped_tensors.hpp"

namespace ckplugin::gguf {
using namespace ck;

// One GGUF file read and validated on its own (a shard of a split set is one such file).
struct ParsedGguf {
    ModelHeader header;
    support::MappedTensors tensors;
    std::uint64_t data_start = 0;
};
ParsedGguf parse_gguf_file(const std::filesystem::path& path, Context& context);

// Reads a GGUF file, or the whole llama-gguf-split set a shard belongs to (gguf_split_set.hpp),
// as one model.
class GgufReader final : public Reader {
  public:
    explicit GgufReader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    TensorView tensor(std::size_t index) override;

    // Where the (first) file's data section starts.
    std::uint64_t data_start() const noexcept { return data_start_; }

  private:
    Context& context_;
    std::vector<support::MappedTensors> shards_;  // one per file: a single file, or a set
    // Tensor i of the header handed out: which shard, and its index there.
    std::vector<std::pair<std::size_t, std::size_t>> locations_;
    std::uint64_t data_start_ = 0;
};

// Does the file start with the GGUF magic? (The descriptor's probe; `path` is not used.)
bool looks_like_gguf(const unsigned char* head, std::size_t size, const char* path = nullptr);

}  // namespace ckplugin::gguf
