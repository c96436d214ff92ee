// GgufReader: maps a GGUF file, validates everything gguf.md lists, and hands out tensor bytes
// as views into the mapping.
#pragma once

#include <memory>
#include <optional>

#include "ck/stage.hpp"
#include "ck/support/mapped_tensors.hpp"

namespace ckplugin::gguf {
using namespace ck;

class GgufReader final : public Reader {
  public:
    explicit GgufReader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    TensorView tensor(std::size_t index) override;
    // Fails on bytes after the last tensor, as the safetensors reader does (open() warns).
    void verify() override;

    std::uint64_t data_start() const noexcept { return data_start_; }

  private:
    Context& context_;
    support::MappedTensors tensors_;
    std::uint64_t data_start_ = 0;
    std::optional<Error> trailing_;  // bytes after the last tensor, for verify()
};

// Does the file start with the GGUF magic? (The descriptor's probe; `path` is not used.)
bool looks_like_gguf(const unsigned char* head, std::size_t size, const char* path = nullptr);

}  // namespace ckplugin::gguf
