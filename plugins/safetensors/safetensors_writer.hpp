// SafetensorsWriter: one .safetensors file, tensors in header order, packed without gaps (the
// format allows none), data starting 8-byte aligned; GGUF metadata and repacked pairs recorded
// in __metadata__ (README.md).
#pragma once

#include <string>
#include <vector>

#include "ck/conventions/ckhost_keys.hpp"
#include "ck/stage.hpp"

namespace ckplugin::safetensors {
using namespace ck;

class SafetensorsWriter final : public Writer {
  public:
    explicit SafetensorsWriter(Context& context) : context_(context) {}
    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override { return {path_}; }
    std::vector<std::string> understood_keys() const override {
        return {std::string(conventions::repack_prefix)};
    }
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    void finish() override;

  private:
    Context& context_;
    std::filesystem::path path_;
    std::vector<std::pair<std::string, std::uint64_t>> tensors_;  // name, bytes
    std::string preamble_;                                        // length, header JSON, padding
    std::size_t next_ = 0;
    OutputFile* file_ = nullptr;
};

}  // namespace ckplugin::safetensors
