// GgufWriter: writes exactly ggml's layout (header, KVs in order, tensor infos, padding, data
// each padded to the alignment), honouring general.alignment.
#pragma once

#include "ck/options.hpp"
#include "ck/stage.hpp"
#include "gguf_endian.hpp"

namespace ckplugin::gguf {
using namespace ck;

// Encodes a single value in GGUF's binary form (without key or type id) onto `out`.
void encode_gguf_value(const Value& v, std::vector<std::byte>& out);

// `header` as a GGUF file stores it, after every check that it can be (types, names, shapes,
// sizes, alignment): general.quantization_version added where ckhost adds it. Throws on the
// first problem. The split writer checks the whole model with it before cutting it in shards.
ModelHeader storable_header(const ModelHeader& header);

class GgufWriter final : public Writer {
  public:
    explicit GgufWriter(Context& context) : context_(context) {}
    GgufWriter(const Options& options, Context& context)
        : context_(context), order_(byte_order_option(options)) {}
    void prepare(const ModelHeader& header, const std::filesystem::path& destination) override;
    std::vector<std::filesystem::path> outputs() const override { return {path_}; }
    void begin(OutputSink& out) override;
    void write(std::size_t index, const TensorView& tensor) override;
    bool writes_rows() const override { return true; }
    void write_rows(std::size_t index, RowRange rows, const TensorView& block) override;
    void finish() override;

  private:
    // Appends bytes of tensor next_ in the output's byte order.
    void append(const TensorInfo& t, const TensorView& bytes);
    Context& context_;
    std::filesystem::path path_;
    ModelHeader header_;
    std::uint64_t alignment_ = 0;
    std::vector<std::byte> preamble_;  // everything before the data section
    std::size_t next_ = 0;
    std::uint64_t next_row_ = 0;  // of tensor next_, while it comes in row blocks
    OutputFile* file_ = nullptr;
    ByteOrder order_ = ByteOrder::little;  // `endian=big` writes gguf_convert_endian.py's layout
};

}  // namespace ckplugin::gguf
