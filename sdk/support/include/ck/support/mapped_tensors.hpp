// A reader's input: one mapped file and where each tensor's bytes lie in it. The GGUF,
// safetensors and bump readers (and any third-party reader of a format whose tensors are stored
// as they are handed out) keep one instead of a mapping and an extent table of their own, so
// every tensor they hand out is a file-backed view and a bad index is refused the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "ck/mapped_file.hpp"
#include "ck/model.hpp"

namespace ck::support {

class MappedTensors {
  public:
    // Maps `path`, forgetting any earlier file and extents. Throws ck::Error naming the file.
    const MappedFile& open(const std::filesystem::path& path);

    // The mapped file; throws when open() has not succeeded.
    const MappedFile& file() const;
    // The same, shared: for values that keep pointing into the mapping (metadata arrays).
    const std::shared_ptr<const MappedFile>& shared_file() const noexcept { return mapping_; }

    // Records where the next tensor lies: `bytes` bytes at absolute file offset `offset`.
    // Tensors are numbered in the order they are added, as in the header handed out.
    void add(std::uint64_t offset, std::uint64_t bytes);
    std::size_t count() const noexcept { return extents_.size(); }
    // Where tensor `index` starts in the file (index < count()).
    std::uint64_t offset(std::size_t index) const { return extents_.at(index).offset; }

    // Tensor `index` as a file-backed view of the mapping. Throws ck::Error for an index that
    // was never added (or before open()), and when the extent is not inside the file.
    TensorView view(std::size_t index) const;

  private:
    struct Extent {
        std::uint64_t offset;
        std::uint64_t bytes;
    };
    std::shared_ptr<const MappedFile> mapping_;
    std::vector<Extent> extents_;
};

}  // namespace ck::support
