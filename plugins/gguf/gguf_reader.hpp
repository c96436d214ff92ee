// GgufReader: maps a GGUF file, validates everything gguf.md lists, and hands out tensor bytes
// as views into the mapping.
#pragma once

#include <memory>

#include "ck/mapped_file.hpp"
#include "ck/stage.hpp"

namespace ckplugin::gguf {
using namespace ck;

class GgufReader final : public Reader {
  public:
    explicit GgufReader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    TensorView tensor(std::size_t index) override;

    std::uint64_t data_start() const noexcept { return data_start_; }

  private:
    Context& context_;
    std::shared_ptr<const MappedFile> mapping_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> extents_;  // absolute offset, bytes
    std::uint64_t data_start_ = 0;
};

bool looks_like_gguf(const unsigned char* head, std::size_t size);

}  // namespace ckplugin::gguf
