#include "gguflite_reader.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <unordered_set>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/byte_cursor.hpp"
#include "ck/support/little_endian.hpp"
#include "gguflite_codec.hpp"
#include "json_text.hpp"
#include "metadata_text.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguflite {
using namespace ck;

namespace {

using support::ByteCursor;

std::string shape_text(std::span<const std::uint32_t> dims) {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

void check_magic(ByteCursor& in) {
    const auto* head = reinterpret_cast<const char*>(in.here());
    if (in.remaining() < 4) in.fail("file too short to hold the GGUF-lite magic", 0, "magic");
    const auto found = in.read<std::uint32_t>("the magic", "magic");
    if (found == magic) return;
    const std::string_view bytes(head, 4);
    std::string why = "not a GGUF-lite file";
    if (bytes == "GGUF") why = "this is a GGUF file, not GGUF-lite (use the gguf reader)";
    if (bytes == "GLFT") why = "the magic was written big-endian; GGUF-lite is little-endian";
    char shown[16];
    std::snprintf(shown, sizeof shown, "0x%08x", found);
    in.fail("bad magic " + std::string(shown) + ", expected 0x474c4654 (bytes 54 46 4c 47): " + why,
            0, "magic");
}

// Reads one descriptor and checks everything about it that does not need the others.
StoredTensor read_descriptor(ByteCursor& in, std::uint64_t index,
                             std::vector<std::uint64_t>& offset_field_at) {
    StoredTensor t;
    t.descriptor_at = in.pos();
    const std::string index_subject = "tensor " + std::to_string(index);
    const auto name_len = in.read<std::uint16_t>("the name length", index_subject);
    const std::uint64_t name_at = in.pos();
    t.name = in.chars(name_len, "the tensor name", index_subject);
    if (auto bad = invalid_utf8_at(t.name))
        in.fail("name is not valid UTF-8", name_at + *bad, index_subject);
    const std::string subject = tensor_subject(index, t.name);

    const std::uint64_t n_dims_at = in.pos();
    const auto n_dims = in.read<std::uint8_t>("the number of dims", subject);
    if (n_dims == 0 || n_dims > max_dims)
        in.fail("n_dims is " + std::to_string(n_dims) + ", must be 1 to 8", n_dims_at, subject);
    const std::uint64_t dims_at = in.pos();
    for (unsigned d = 0; d < n_dims; ++d)
        t.dims.push_back(in.read<std::uint32_t>("a dim", subject));
    const std::uint64_t dtype_at = in.pos();
    const auto dtype = in.read<std::uint8_t>("the dtype", subject);
    if (dtype >= dtype_count)
        in.fail("dtype " + std::to_string(dtype) +
                    " is unknown (0 F32, 1 F16, 2 Q8_per_channel, 3 Q4_per_group_64)",
                dtype_at, subject);
    t.dtype = static_cast<Dtype>(dtype);
    offset_field_at.push_back(in.pos());
    t.offset = in.read<std::uint64_t>("the data offset", subject);

    const std::string shape = "shape " + shape_text(t.dims);
    for (unsigned d = 0; d < n_dims; ++d)
        if (t.dims[d] == 0)
            in.fail(shape + ": dim " + std::to_string(d) + " is 0 (zero-size tensor)",
                    dims_at + 4 * d, subject);
    if (!element_count(t.dims)) in.fail(shape + ": element count overflows", dims_at, subject);
    if (is_quantized(t.dtype) && n_dims != 2)
        in.fail(std::string(dtype_name(t.dtype)) + " needs a 2-D tensor, this one has " +
                    std::to_string(n_dims) + " dims",
                dtype_at, subject);
    if (t.dtype == Dtype::q4 && t.dims[1] % q4_group != 0)
        in.fail("inner dim " + std::to_string(t.dims[1]) +
                    " is not a multiple of 64, as Q4_per_group_64 needs",
                dims_at + 4, subject);
    auto bytes = data_bytes(t.dtype, t.dims);
    if (!bytes)
        in.fail(shape + " of " + std::string(dtype_name(t.dtype)) + ": size in bytes overflows",
                dims_at, subject);
    t.bytes = *bytes;
    return t;
}

// The fixed header after the magic: version, then the two counts, each bounded by the file.
struct HeaderCounts {
    std::uint32_t n_tensors = 0;
    std::uint32_t metadata_bytes = 0;
};

HeaderCounts read_header_counts(ByteCursor& in) {
    const std::uint64_t version_at = in.pos();
    const auto found_version = in.read<std::uint32_t>("the header", "version");
    if (found_version != version)
        in.fail("unsupported GGUF-lite version " + std::to_string(found_version) + ", expected 1",
                version_at, "version");
    HeaderCounts counts;
    const std::uint64_t n_tensors_at = in.pos();
    counts.n_tensors = in.read<std::uint32_t>("the header", "n_tensors");
    const std::uint64_t metadata_len_at = in.pos();
    counts.metadata_bytes = in.read<std::uint32_t>("the header", "metadata_len");
    if (counts.metadata_bytes > in.remaining())
        in.fail("metadata section of " + std::to_string(counts.metadata_bytes) +
                    " bytes runs past the end of the file (" + std::to_string(in.remaining()) +
                    " bytes remain)",
                metadata_len_at, "metadata_len");
    if (counts.n_tensors > (in.remaining() - counts.metadata_bytes) / min_descriptor_bytes)
        in.fail(std::to_string(counts.n_tensors) + " descriptors cannot fit in the " +
                    std::to_string(in.remaining() - counts.metadata_bytes) +
                    " bytes after the metadata (corrupt count or truncated file)",
                n_tensors_at, "n_tensors");
    return counts;
}

// Every descriptor, names unique; `offset_field_at` gets where each data offset was read.
void read_descriptors(ByteCursor& in, std::uint32_t n_tensors, std::vector<StoredTensor>& stored,
                      std::vector<std::uint64_t>& offset_field_at) {
    stored.clear();
    stored.reserve(n_tensors);
    std::unordered_set<std::string_view> names;
    for (std::uint32_t i = 0; i < n_tensors; ++i) {
        stored.push_back(read_descriptor(in, i, offset_field_at));
        if (!names.insert(stored.back().name).second)
            in.fail("duplicate tensor name", stored.back().descriptor_at,
                    tensor_subject(i, stored.back().name));
    }
}

// Every tensor inside the file, and no two sharing a byte (gaps are allowed).
void check_extents(const ByteCursor& in, const std::vector<StoredTensor>& stored,
                   const std::vector<std::uint64_t>& offset_field_at, std::uint64_t data_start,
                   std::uint64_t file_size) {
    const std::uint64_t data_size = file_size - data_start;
    const auto n_tensors = static_cast<std::uint32_t>(stored.size());
    for (std::uint32_t i = 0; i < n_tensors; ++i) {
        const StoredTensor& t = stored[i];
        if (t.offset > data_size || t.bytes > data_size - t.offset)
            in.fail("data (" + std::to_string(t.bytes) + " bytes at data offset " +
                        std::to_string(t.offset) + ", file offset " +
                        std::to_string(data_start + t.offset) +
                        ") runs past the end of the file (" + std::to_string(file_size) + " bytes)",
                    offset_field_at[i], tensor_subject(i, t.name));
    }
    std::vector<std::uint32_t> by_offset(n_tensors);
    std::iota(by_offset.begin(), by_offset.end(), 0u);
    std::sort(by_offset.begin(), by_offset.end(), [&](std::uint32_t a, std::uint32_t b) {
        return stored[a].offset != stored[b].offset ? stored[a].offset < stored[b].offset : a < b;
    });
    for (std::size_t k = 1; k < by_offset.size(); ++k) {
        const StoredTensor& before = stored[by_offset[k - 1]];
        const StoredTensor& t = stored[by_offset[k]];
        if (before.offset + before.bytes > t.offset)
            in.fail("data (data offset " + std::to_string(t.offset) + ", " +
                        std::to_string(t.bytes) + " bytes) overlaps " +
                        tensor_subject(by_offset[k - 1], before.name) + " (data offset " +
                        std::to_string(before.offset) + ", " + std::to_string(before.bytes) +
                        " bytes)",
                    offset_field_at[by_offset[k]], tensor_subject(by_offset[k], t.name));
    }
}

// The tensor directory in ggml types: F32 and F16 as stored, Q8/Q4 as the F32 they become
// (with their stored dtype and bytes, which `inspect` shows).
std::vector<TensorInfo> tensor_directory(const std::vector<StoredTensor>& stored,
                                         std::uint64_t data_start) {
    std::vector<TensorInfo> tensors;
    tensors.reserve(stored.size());
    for (const StoredTensor& t : stored) {
        TensorInfo info;
        info.name = t.name;
        info.type =
            static_cast<std::uint32_t>(t.dtype == Dtype::f16 ? GgmlType::f16 : GgmlType::f32);
        info.ne.assign(t.dims.rbegin(), t.dims.rend());
        info.nbytes = *element_count(t.dims) * (t.dtype == Dtype::f16 ? 2 : 4);
        info.source_offset = data_start + t.offset;
        if (is_quantized(t.dtype)) {
            info.stored_type = std::string(dtype_name(t.dtype));
            info.stored_bytes = t.bytes;
        }
        tensors.push_back(std::move(info));
    }
    return tensors;
}

// What `inspect` shows about the container: its sections, and the tensors and bytes per dtype.
std::vector<std::pair<std::string, std::string>> format_facts(
    const std::vector<StoredTensor>& stored, std::uint64_t metadata_bytes, std::uint64_t data_start,
    std::uint64_t file_size) {
    std::uint64_t count_by_dtype[dtype_count] = {}, bytes_by_dtype[dtype_count] = {};
    std::uint64_t used = 0;
    for (const StoredTensor& t : stored) {
        ++count_by_dtype[static_cast<std::size_t>(t.dtype)];
        bytes_by_dtype[static_cast<std::size_t>(t.dtype)] += t.bytes;
        used += t.bytes;
    }
    std::vector<std::pair<std::string, std::string>> facts = {
        {"version", std::to_string(version)},
        {"metadata bytes", std::to_string(metadata_bytes)},
        {"descriptor bytes", std::to_string(data_start - header_bytes - metadata_bytes)},
        {"data start", std::to_string(data_start)},
        {"file size", std::to_string(file_size)}};
    // One value per fact (inspect --json types them): tensors and bytes per stored dtype, and
    // which dtypes are dequantized to f32 when read.
    std::string dequantized;
    for (std::uint8_t d = 0; d < dtype_count; ++d) {
        if (count_by_dtype[d] == 0) continue;
        const std::string name(dtype_name(static_cast<Dtype>(d)));
        facts.emplace_back("stored " + name + " tensors", std::to_string(count_by_dtype[d]));
        facts.emplace_back("stored " + name + " bytes", std::to_string(bytes_by_dtype[d]));
        if (is_quantized(static_cast<Dtype>(d)))
            dequantized += (dequantized.empty() ? "" : ", ") + name;
    }
    if (!dequantized.empty()) facts.emplace_back("read as f32 (dequantized)", dequantized);
    const std::uint64_t data_size = file_size - data_start;
    if (data_size > used) facts.emplace_back("unused data bytes", std::to_string(data_size - used));
    return facts;
}

}  // namespace

bool looks_like_gguflite(const unsigned char* head, std::size_t size, const char*) {
    if (size < 4) return false;
    ByteCursor in(reinterpret_cast<const std::byte*>(head), size, {});
    return in.read<std::uint32_t>("the magic") == magic;
}

ModelHeader GgufLiteReader::open(const fs::path& path) {
    file_ = path.string();
    std::error_code ec;
    const auto file_size = fs::file_size(path, ec);
    if (ec) throw Error("cannot open: " + ec.message(), file_);
    if (file_size == 0)
        throw Error("empty file (0 bytes): not a GGUF-lite file", file_, 0, "magic");
    auto mapping = MappedFile::open(path);
    mapping_ = mapping;
    ByteCursor in(mapping->data(), mapping->size(), file_);

    check_magic(in);
    const HeaderCounts counts = read_header_counts(in);
    metadata_bytes_ = counts.metadata_bytes;

    ModelHeader header;
    header.source = file_;
    header.format = "gguflite";
    const std::uint64_t metadata_at = in.pos();
    const std::string_view text = in.chars(metadata_bytes_, "the metadata", "metadata_len");
    header.metadata = parse_metadata(text, metadata_at, file_);

    std::vector<std::uint64_t> offset_field_at;
    read_descriptors(in, counts.n_tensors, stored_, offset_field_at);
    data_start_ = in.pos();
    check_extents(in, stored_, offset_field_at, data_start_, file_size);

    header.tensors = tensor_directory(stored_, data_start_);
    header.format_facts = format_facts(stored_, metadata_bytes_, data_start_, file_size);
    return header;
}

std::span<const std::byte> GgufLiteReader::stored_bytes(std::size_t index) const {
    if (!mapping_ || index >= stored_.size()) throw Error("tensor index out of range", file_);
    const StoredTensor& t = stored_[index];
    return {mapping_->data() + data_start_ + t.offset, static_cast<std::size_t>(t.bytes)};
}

TensorView GgufLiteReader::tensor(std::size_t index) {
    const std::span<const std::byte> bytes = stored_bytes(index);
    const StoredTensor& t = stored_[index];
    if (!is_quantized(t.dtype)) return mapping_->view(data_start_ + t.offset, t.bytes);
    const QuantLayout layout = quant_layout(t.dtype, t.dims[0], t.dims[1]);
    std::vector<std::byte> values(*element_count(t.dims) * sizeof(float));
    dequantize_rows(t.dtype, layout, bytes.data(), bytes.data() + layout.scale_bytes(), layout.rows,
                    reinterpret_cast<float*>(values.data()));
    ck::le::in_place(reinterpret_cast<float*>(values.data()), values.size() / sizeof(float));
    mapping_->release(bytes);  // the packed bytes are done
    return TensorView::owning(std::move(values));
}

void GgufLiteReader::verify() {
    for (std::size_t i = 0; i < stored_.size(); ++i) {
        const StoredTensor& t = stored_[i];
        if (!is_quantized(t.dtype)) continue;
        throw_if_interrupted();
        const std::span<const std::byte> bytes = stored_bytes(i);
        const QuantLayout layout = quant_layout(t.dtype, t.dims[0], t.dims[1]);
        const std::byte* scales = bytes.data();
        const std::byte* values = bytes.data() + layout.scale_bytes();
        const std::size_t scale_row_bytes = layout.scales_per_row * 2;
        std::vector<float> row(layout.cols);
        std::vector<std::uint16_t> new_scales(layout.scales_per_row);
        std::vector<std::byte> new_values(layout.row_value_bytes);
        std::uint64_t differing_rows = 0, first_differing = 0, non_finite_scales = 0;
        for (std::uint64_t r = 0; r < layout.rows; ++r) {
            const std::byte* s = scales + r * scale_row_bytes;
            const std::byte* v = values + r * layout.row_value_bytes;
            dequantize_rows(t.dtype, layout, s, v, 1, row.data());
            if (t.dtype == Dtype::q8)
                new_scales[0] =
                    quantize_q8_row(row.data(), layout.cols,
                                    reinterpret_cast<std::int8_t*>(new_values.data()), nullptr);
            else
                quantize_q4_row(row.data(), layout.cols, new_scales.data(),
                                reinterpret_cast<std::uint8_t*>(new_values.data()), nullptr);
            for (std::uint64_t g = 0; g < layout.scales_per_row; ++g)
                non_finite_scales += (ck::le::load<std::uint16_t>(s + 2 * g) & 0x7c00) == 0x7c00;
            ck::le::in_place(std::span(new_scales));  // as the file holds them
            const bool same = std::memcmp(new_scales.data(), s, scale_row_bytes) == 0 &&
                              std::memcmp(new_values.data(), v, layout.row_value_bytes) == 0;
            if (!same && differing_rows++ == 0) first_differing = r;
        }
        mapping_->release(bytes);  // verified: its pages can go
        const std::string where = file_ + ": byte " + std::to_string(data_start_ + t.offset) +
                                  ": " + tensor_subject(i, t.name) + ": ";
        if (non_finite_scales > 0)
            context_.warn(where + std::to_string(non_finite_scales) +
                          " scales are inf or NaN: their values dequantize to inf or NaN");
        if (differing_rows > 0)
            context_.warn(where + std::to_string(differing_rows) + " of " +
                          std::to_string(layout.rows) + " rows (the first: row " +
                          std::to_string(first_differing) +
                          ") do not come back byte for byte when their values are quantized "
                          "again, so a gguflite:gguflite conversion would change them");
    }
}

}  // namespace ckplugin::gguflite
