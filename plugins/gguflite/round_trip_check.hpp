// The writer's round-trip check (option `report`): after each tensor is written, its bytes are
// read back from the output file and decoded the way the reader decodes them, and compared
// with the source values and with the writer's own fake quantization (quantize, then
// q * f32(s) from the integer values, before packing). After the last tensor the whole file is
// opened with GgufLiteReader, which re-checks every structural rule, and its descriptors and
// metadata are compared with what the writer meant to write.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ck/model.hpp"
#include "source_values.hpp"
#include "tensor_plan.hpp"

namespace ckplugin::gguflite {
using namespace ck;

struct TensorCheck {
    std::string name;
    Dtype dtype = Dtype::f32;
    double max_error_vs_source = 0;  // over the values whose source is finite
    double max_error_vs_fake = 0;    // must be exactly 0
    std::uint64_t mismatches = 0;    // values whose bits differ from the fake quantization
    std::uint64_t non_finite_source = 0;
};

class RoundTripCheck {
  public:
    // Opens `written` (the writer's temporary output) for reading back.
    explicit RoundTripCheck(std::filesystem::path written);
    ~RoundTripCheck();
    RoundTripCheck(const RoundTripCheck&) = delete;
    RoundTripCheck& operator=(const RoundTripCheck&) = delete;

    // Tensor `plan`, whose bytes start at file offset `start` and are on disk.
    void check_tensor(const TensorPlan& plan, std::uint64_t start, SourceValues& source,
                      ConsumedPages& pages);
    // The complete file: structure through the reader, then descriptors and metadata.
    void check_file(const Metadata& metadata, const std::vector<TensorPlan>& plans,
                    std::uint64_t data_start, const std::string& shown_name);

    const std::vector<TensorCheck>& results() const noexcept { return results_; }
    bool passed() const noexcept;

  private:
    void read_back(std::uint64_t offset, std::size_t size, std::byte* out);

    std::filesystem::path path_;
    int fd_ = -1;
    std::vector<TensorCheck> results_;
};

}  // namespace ckplugin::gguflite
