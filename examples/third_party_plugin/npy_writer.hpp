// NpyWriter: a directory with one .npy file per tensor and an index.json, so that a Python
// user loads a whole model with NumPy alone. Quantized tensors are dequantized with ckhost's
// kernels (the variant this CPU runs best); integer and f64 tensors keep their own dtype.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ck/kernels/dequant.hpp"
#include "ck/stage.hpp"

namespace npy {

enum class FloatType { f32, f16 };

class NpyWriter final : public ck::Writer {
  public:
    NpyWriter(const ck::Options& options, ck::Context& context);

    void prepare(const ck::ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override;
    void begin(ck::OutputSink& out) override;
    void write(std::size_t index, const ck::TensorView& tensor) override;
    void finish() override;

  private:
    struct Planned {
        std::string name;
        std::string file;
        std::uint32_t source_type = 0;
        std::vector<std::uint64_t> shape;  // NumPy order: ggml's ne reversed
        std::uint64_t elements = 0;
        bool dequantize = true;  // false: the bytes are copied as they are
        std::string descr;       // NumPy type string of the stored data ("<f4", "<i4")
    };

    void write_dequantized(ck::OutputFile& file, const Planned& t, const ck::TensorView& tensor);

    ck::Context& context_;
    FloatType float_type_;
    const ck::kernels::DequantTable& kernels_;
    std::filesystem::path directory_;
    std::vector<Planned> tensors_;
    std::string index_json_;
    ck::OutputSink* out_ = nullptr;
};

}  // namespace npy
