#include "gguf_writer.hpp"

#include <boost/endian/conversion.hpp>

#include <algorithm>
#include <unordered_set>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/destination.hpp"
#include "ck/support/tensor_io.hpp"
#include "gguf_format.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguf {
using namespace ck;
namespace {

template <class T>
void put(std::vector<std::byte>& out, T v) {
    std::byte buf[sizeof(T)];
    boost::endian::endian_store<T, sizeof(T), boost::endian::order::little>(
        reinterpret_cast<unsigned char*>(buf), v);
    out.insert(out.end(), buf, buf + sizeof(T));
}

void put_string(std::vector<std::byte>& out, std::string_view s) {
    put<std::uint64_t>(out, s.size());
    auto b = std::as_bytes(std::span(s.data(), s.size()));
    out.insert(out.end(), b.begin(), b.end());
}

fs::path output_path(const fs::path& destination, const ModelHeader& header) {
    return support::single_file_destination(destination, header.source, ".gguf");
}

std::uint64_t checked_alignment(const Metadata& meta) {
    const Value* v = meta.find(alignment_key);
    if (!v) return default_alignment;
    if (v->type() != ValueType::u32 || !is_power_of_two(v->raw()))
        throw key_error("general.alignment must be a u32 power of two, got " + v->to_display(),
                        "general.alignment");
    return v->raw();
}

}  // namespace

void encode_gguf_value(const Value& v, std::vector<std::byte>& out) {
    switch (v.type()) {
        case ValueType::string:
            put_string(out, v.str());
            return;
        case ValueType::array: {
            const ArrayValue& a = v.array();
            put<std::uint32_t>(out, static_cast<std::uint32_t>(a.element_type()));
            put<std::uint64_t>(out, a.size());
            out.insert(out.end(), a.encoded().begin(), a.encoded().end());
            return;
        }
        default: {
            // Scalars keep their raw bits: the low value_type_size() bytes, little-endian.
            const std::size_t n = value_type_size(v.type());
            for (std::size_t i = 0; i < n; ++i)
                out.push_back(static_cast<std::byte>((v.raw() >> (8 * i)) & 0xff));
        }
    }
}

ModelHeader storable_header(const ModelHeader& header) {
    ModelHeader out = header;
    checked_alignment(out.metadata);

    bool quantized = false;
    std::unordered_set<std::string_view> names;
    for (std::size_t i = 0; i < out.tensors.size(); ++i) {
        const TensorInfo& t = out.tensors[i];
        const TypeInfo* info = find_type(t.type);
        if (!info || info->removed)
            throw tensor_error("type id " + std::to_string(t.type) + " cannot be stored in GGUF",
                               t.name);
        if (t.name.size() > max_name_bytes)
            throw tensor_error("name longer than 63 bytes cannot be stored in GGUF", t.name);
        if (!names.insert(t.name).second) throw tensor_error("duplicate tensor name", t.name);
        if (t.ne.size() > max_dims)
            throw tensor_error(std::to_string(t.ne.size()) + " dimensions; GGUF stores at most 4",
                               t.name);
        auto bytes = tensor_bytes(t.type, t.ne);
        if (!bytes || *bytes != t.nbytes)
            throw tensor_error("byte size " + std::to_string(t.nbytes) + " does not match type " +
                                   std::string(type_name(t.type)) + " and shape " +
                                   t.shape_string(),
                               t.name);
        quantized = quantized || info->quantized;
    }
    // A GGUF source without the key was written that way by ggml (which reads it fine), and
    // gguf:gguf must reproduce it byte for byte; anything else quantized gets the key.
    if (quantized && out.format != "gguf" && !out.metadata.contains(quantization_version_key))
        out.metadata.set(std::string(quantization_version_key),
                         Value::of_u32(quantization_version));

    return out;
}

void GgufWriter::prepare(const ModelHeader& header, const fs::path& destination) {
    header_ = storable_header(header);
    path_ = output_path(destination, header);
    alignment_ = checked_alignment(header_.metadata);
    if (order_ == ByteOrder::big)
        for (const TensorInfo& t : header_.tensors)
            if (!find_swap_rule(t.type))
                throw tensor_error(
                    swap_refusal(t.type) + (find_type(t.type)->dequantizable
                                                ? "; a dequant[to=f16] stage can make it f16"
                                                : ""),
                    t.name);

    preamble_.clear();
    for (char c : magic) preamble_.push_back(static_cast<std::byte>(c));
    put<std::uint32_t>(preamble_, write_version);
    put<std::uint64_t>(preamble_, header_.tensors.size());
    put<std::uint64_t>(preamble_, header_.metadata.size());
    for (const auto& [key, value] : header_.metadata) {
        put_string(preamble_, key);
        put<std::uint32_t>(preamble_, static_cast<std::uint32_t>(value.type()));
        encode_gguf_value(value, preamble_);
    }
    std::uint64_t offset = 0;
    for (const TensorInfo& t : header_.tensors) {
        put_string(preamble_, t.name);
        put<std::uint32_t>(preamble_, static_cast<std::uint32_t>(t.ne.size()));
        for (std::int64_t ne : t.ne) put<std::int64_t>(preamble_, ne);
        put<std::uint32_t>(preamble_, t.type);
        put<std::uint64_t>(preamble_, offset);
        offset += align_up(t.nbytes, alignment_);
    }
    if (order_ == ByteOrder::big) swap_header(preamble_, ByteOrder::little);
    preamble_.resize(align_up(preamble_.size(), alignment_), std::byte{0});
    // Every tensor is padded to the alignment, the last one too (as ggml writes it).
    context_.state_output_size(path_, preamble_.size() + offset);
}

void GgufWriter::begin(OutputSink& out) {
    file_ = &out.create(path_);
    file_->write(preamble_);
    preamble_ = {};
    next_ = 0;
}

void GgufWriter::append(const TensorInfo& t, const TensorView& bytes) {
    if (order_ == ByteOrder::big)
        write_swapped(*file_, t.type, bytes);
    else
        support::write_streaming(*file_, bytes);
}

void GgufWriter::write(std::size_t index, const TensorView& tensor) {
    const TensorInfo& t = header_.tensors.at(index);
    if (index != next_ || next_row_ != 0)
        throw tensor_error("tensors must arrive in header order", t.name);
    support::check_tensor_bytes(tensor, t.nbytes, t.name);
    append(t, tensor);
    file_->write_zeros(align_up(t.nbytes, alignment_) - t.nbytes);
    ++next_;
}

void GgufWriter::write_rows(std::size_t index, RowRange rows, const TensorView& block) {
    const TensorInfo& t = header_.tensors.at(index);
    if (index != next_ || rows.first != next_row_)
        throw tensor_error("row blocks must arrive in header order, each tensor's in row order",
                           t.name);
    const std::uint64_t row_bytes = t.row_bytes();
    const std::uint64_t total_rows = t.rows();
    if (rows.count == 0 || rows.first + rows.count > total_rows)
        throw tensor_error("row block outside the tensor's " + std::to_string(total_rows) + " rows",
                           t.name);
    support::check_tensor_bytes(block, rows.count * row_bytes, t.name);
    append(t, block);
    next_row_ += rows.count;
    if (next_row_ < total_rows) return;
    file_->write_zeros(align_up(t.nbytes, alignment_) - t.nbytes);
    next_row_ = 0;
    ++next_;
}

void GgufWriter::finish() {
    if (next_ != header_.tensors.size())
        throw Error("only " + std::to_string(next_) + " of " +
                    std::to_string(header_.tensors.size()) + " tensors were written");
}

}  // namespace ckplugin::gguf
