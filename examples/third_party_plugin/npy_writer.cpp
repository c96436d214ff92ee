#include "npy_writer.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"
#include "npy_format.hpp"

namespace fs = std::filesystem;

namespace npy {
namespace {

// Types stored as they are, with their NumPy type string.
const char* raw_descr(std::uint32_t type) {
    switch (static_cast<ck::GgmlType>(type)) {
        case ck::GgmlType::i8:
            return "<i1";
        case ck::GgmlType::i16:
            return "<i2";
        case ck::GgmlType::i32:
            return "<i4";
        case ck::GgmlType::i64:
            return "<i8";
        case ck::GgmlType::f64:
            return "<f8";
        default:
            return nullptr;
    }
}

std::string numpy_dtype(const std::string& descr) {
    static const std::map<std::string, std::string> names = {
        {"<f4", "float32"}, {"<f2", "float16"}, {"<f8", "float64"}, {"<i1", "int8"},
        {"<i2", "int16"},   {"<i4", "int32"},   {"<i8", "int64"}};
    return names.at(descr);
}

// Scalar metadata for index.json; arrays (tokenizer tables) are left out: they can be large,
// and `ckhost inspect --kv KEY` prints any of them.
nlohmann::json scalar_metadata(const ck::Metadata& metadata) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : metadata) {
        if (value.type() == ck::ValueType::string)
            out[key] = value.str();
        else if (value.type() == ck::ValueType::boolean)
            out[key] = value.raw() != 0;
        else if (auto i = value.as_int(); value.is_integer() && i)
            out[key] = *i;
        else if (auto u = value.as_uint(); value.is_integer() && u)
            out[key] = *u;
        else if (auto d = value.as_double())
            out[key] = *d;
    }
    return out;
}

// Elements dequantized per step: a whole number of blocks, 256 KiB of f32.
constexpr std::uint64_t chunk_elements = 65536;

}  // namespace

NpyWriter::NpyWriter(const ck::Options& options, ck::Context& context)
    : context_(context),
      float_type_(options.get("dtype", "f32") == "f16" ? FloatType::f16 : FloatType::f32),
      kernels_(ck::kernels::plugin_dequant_table()) {}

void NpyWriter::prepare(const ck::ModelHeader& header, const fs::path& destination) {
    directory_ = destination;
    tensors_.clear();
    std::map<std::string, std::string> files;  // file name -> tensor name, to catch clashes
    const std::string float_descr = float_type_ == FloatType::f16 ? "<f2" : "<f4";

    for (const auto& info : header.tensors) {
        Planned t;
        t.name = info.name;
        t.file = file_name(info.name);
        t.source_type = info.type;
        t.elements = info.elements();
        for (auto it = info.ne.rbegin(); it != info.ne.rend(); ++it)
            t.shape.push_back(static_cast<std::uint64_t>(*it));
        if (const char* descr = raw_descr(info.type)) {
            t.dequantize = false;
            t.descr = descr;
        } else if (info.type < ck::ggml_type_count && kernels_.fn[info.type]) {
            t.descr = float_descr;
        } else {
            throw ck::Error("npy cannot store type " + std::string(ck::type_name(info.type)) +
                                ": ckhost has no dequantization kernel for it",
                            header.source, {}, "tensor '" + info.name + "'");
        }
        auto [clash, fresh] = files.emplace(t.file, t.name);
        if (!fresh || t.file == "index.json")
            throw ck::Error("tensors '" + clash->second + "' and '" + t.name +
                                "' would both be written to " + t.file,
                            header.source, {}, "tensor '" + t.name + "'");
        tensors_.push_back(std::move(t));
    }

    nlohmann::json list = nlohmann::json::array();
    for (const auto& t : tensors_)
        list.push_back({{"name", t.name},
                        {"file", t.file},
                        {"shape", t.shape},
                        {"dtype", numpy_dtype(t.descr)},
                        {"source_type", std::string(ck::type_name(t.source_type))}});
    nlohmann::json index = {{"format", "ckhost-npy"},
                            {"version", 1},
                            {"source", header.source},
                            {"source_format", header.format},
                            {"metadata", scalar_metadata(header.metadata)},
                            {"tensors", list}};
    index_json_ = index.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<fs::path> NpyWriter::outputs() const {
    std::vector<fs::path> out;
    for (const auto& t : tensors_) out.push_back(directory_ / t.file);
    out.push_back(directory_ / "index.json");
    return out;
}

void NpyWriter::begin(ck::OutputSink& out) {
    out_ = &out;
}

void NpyWriter::write(std::size_t index, const ck::TensorView& tensor) {
    const Planned& t = tensors_.at(index);
    ck::OutputFile& file = out_->create(directory_ / t.file);
    const std::string preamble = header(t.descr, t.shape);
    file.write(preamble.data(), preamble.size());
    if (t.dequantize)
        write_dequantized(file, t, tensor);
    else
        ck::support::write_streaming(file, tensor);
}

void NpyWriter::write_dequantized(ck::OutputFile& file, const Planned& t,
                                  const ck::TensorView& tensor) {
    const ck::TypeInfo& type = *ck::find_type(t.source_type);
    const auto dequantize = kernels_.fn[t.source_type];
    // A step is a whole number of blocks; every ggml block size divides 65536 or is smaller.
    const std::uint64_t step = std::max<std::uint64_t>(
        chunk_elements / type.block_size * type.block_size, type.block_size);
    std::vector<float> values(step);
    std::vector<std::uint16_t> halves(float_type_ == FloatType::f16 ? step : 0);

    std::uint64_t offset = 0;  // bytes of `tensor` consumed
    for (std::uint64_t done = 0; done < t.elements; done += step) {
        const std::uint64_t n = std::min(step, t.elements - done);
        const std::uint64_t bytes = n / type.block_size * type.block_bytes;
        dequantize(tensor.data() + offset, values.data(), n);
        // The header says little-endian (<f4, <f2) whatever the host's byte order.
        if (float_type_ == FloatType::f32) {
            ck::le::in_place(values.data(), n);
            file.write(values.data(), n * sizeof(float));
        } else {
            for (std::uint64_t i = 0; i < n; ++i) halves[i] = ck::kernels::f32_to_f16(values[i]);
            ck::le::in_place(halves.data(), n);
            file.write(halves.data(), n * sizeof(std::uint16_t));
        }
        // Pages already converted are not needed again: keeps memory flat on big tensors.
        tensor.release(offset, offset + bytes);
        offset += bytes;
    }
}

void NpyWriter::finish() {
    out_->create(directory_ / "index.json").write(index_json_.data(), index_json_.size());
}

}  // namespace npy
