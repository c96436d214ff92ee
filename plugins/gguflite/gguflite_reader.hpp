// GgufLiteReader: maps a GGUF-lite file, checks every rule of docs/formats/gguf-lite.md before
// anything is read, and hands out tensors as ggml types: F32 and F16 as views into the mapping,
// Q8/Q4 (which have no ggml equivalent) dequantized to F32.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ck/mapped_file.hpp"
#include "ck/stage.hpp"
#include "gguflite_format.hpp"

namespace ckplugin::gguflite {
using namespace ck;

// A tensor as the file stores it.
struct StoredTensor {
    std::string name;
    Dtype dtype = Dtype::f32;
    std::vector<std::uint32_t> dims;  // PyTorch order: dims[0] outermost
    std::uint64_t offset = 0;         // from the start of the data section
    std::uint64_t bytes = 0;
    std::uint64_t descriptor_at = 0;  // file offset of the descriptor
};

class GgufLiteReader final : public Reader {
  public:
    explicit GgufLiteReader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    // F32/F16: the stored bytes; Q8/Q4: the dequantized values as F32.
    TensorView tensor(std::size_t index) override;
    // Re-quantizes every Q8/Q4 tensor from its own dequantized values (the writer's round trip
    // without the source) and warns about tensors that would not come back byte for byte, and
    // about scales that are not finite.
    void verify() override;

    const std::vector<StoredTensor>& stored() const noexcept { return stored_; }
    std::span<const std::byte> stored_bytes(std::size_t index) const;
    std::uint64_t data_start() const noexcept { return data_start_; }
    std::uint64_t metadata_bytes() const noexcept { return metadata_bytes_; }

  private:
    Context& context_;
    std::string file_;
    std::shared_ptr<const MappedFile> mapping_;
    std::vector<StoredTensor> stored_;
    std::uint64_t data_start_ = 0;
    std::uint64_t metadata_bytes_ = 0;
};

bool looks_like_gguflite(const unsigned char* head, std::size_t size, const char* path = nullptr);

}  // namespace ckplugin::gguflite
