// SafetensorsReader: maps a .safetensors file, checks its header completely before anything
// is read (length, JSON, duplicate names, dtypes, shapes, sizes, offsets in bounds and not
// overlapping, repacked pairs), and hands out tensor bytes as views into the mapping.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ck/stage.hpp"
#include "ck/support/mapped_tensors.hpp"

namespace ck::safetensors {
using namespace ck;

class SafetensorsReader final : public Reader {
  public:
    explicit SafetensorsReader(Context& context) : context_(context) {}
    ModelHeader open(const std::filesystem::path& path) override;
    TensorView tensor(std::size_t index) override;
    // Any rows: a slice of the mapping.
    std::uint64_t row_granule(std::size_t) const override { return 1; }
    TensorView tensor_rows(std::size_t index, RowRange rows) override;
    // Also refuses bytes no tensor covers (Hugging Face's library rejects such files).
    void verify() override;

  private:
    Context& context_;
    std::string file_;
    support::MappedTensors tensors_;
    std::vector<std::string> unindexed_;  // gaps and trailing bytes, for verify()
    std::uint64_t data_start_ = 0;
    std::vector<std::uint64_t> row_bytes_;  // of each tensor of the header handed out
};

// Does the file start like a safetensors file (a plausible length, then '{')?
bool looks_like_safetensors(const unsigned char* head, std::size_t size, const char* path);

}  // namespace ck::safetensors
