#include "gguflite_writer.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>

#include "ck/error.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/parallel.hpp"
#include "ck/support/destination.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"
#include "gguflite_codec.hpp"
#include "metadata_text.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguflite {
using namespace ck;
namespace {

// Pool items per step: a step (16 items, 4 MiB of f32 values) is converted in parallel and
// written out in order while the next step is converted (two buffers, see in_steps).
constexpr std::uint64_t items_per_step = 16;
// Bytes copied per step when a tensor passes through unchanged.
constexpr std::uint64_t copy_chunk_bytes = 4u << 20;

void append(std::vector<std::byte>& out, const void* data, std::size_t size) {
    const std::size_t at = out.size();
    out.resize(at + size);
    if (size > 0) std::memcpy(out.data() + at, data, size);
}

template <class T>
void put(std::vector<std::byte>& out, T v) {
    std::byte bytes[sizeof v];
    ck::le::store(bytes, v);
    append(out, bytes, sizeof v);
}

// The metadata to store: `header`'s, with its general.file_type made to fit the types this file's
// tensors are read back as (F16 as F16, everything else as F32: Q8/Q4 are dequantized), by
// ck::llama's rule, the one the host applies after a transform. The host cannot apply it here:
// only this writer knows what it stores.
Metadata metadata_to_store(const ModelHeader& header, const std::vector<TensorPlan>& plans,
                           Context& context) {
    // A key the input lacks is not added: the writer adds no keys of its own.
    if (!header.metadata.contains(llama::file_type_key)) return header.metadata;
    ModelHeader read_back = header;
    bool any_quantized = false;
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const TensorPlan& p = plans[i];
        TensorInfo& t = read_back.tensors[i];
        t.type = static_cast<std::uint32_t>(p.dtype == Dtype::f16 ? GgmlType::f16 : GgmlType::f32);
        t.ne.assign(p.dims.rbegin(), p.dims.rend());
        any_quantized = any_quantized || is_quantized(p.dtype);
    }
    if (const auto update = llama::keep_file_type_true(header, read_back); update.changed)
        context.note("gguflite: " + update.note +
                     (any_quantized ? " (as read back: Q8 and Q4 are dequantized to f32)" : ""));
    return std::move(read_back.metadata);
}

fs::path output_path(const fs::path& destination, const ModelHeader& header) {
    return support::single_file_destination(destination, header.source, file_extension);
}

std::span<const std::byte> as_bytes_of(const void* data, std::size_t size) {
    return {static_cast<const std::byte*>(data), size};
}

// Runs compute(step, buffer) for steps 0..count-1 and emit(step, buffer) for each in order,
// computing step k+1 on the pool (into the other of two buffers) while this thread emits
// step k: the copy into the page cache no longer idles the other threads.
template <class Compute, class Emit>
void in_steps(std::uint64_t count, Compute compute, Emit emit) {
    if (count == 0) return;
    auto start = [&](std::uint64_t step) {
        return std::make_unique<ck::Task>([&compute, step] { compute(step, step % 2); });
    };
    std::unique_ptr<ck::Task> current = start(0);
    for (std::uint64_t step = 0; step < count; ++step) {
        current->wait();
        std::unique_ptr<ck::Task> next = step + 1 < count ? start(step + 1) : nullptr;
        emit(step, step % 2);
        current = std::move(next);
    }
}

}  // namespace

GgufLiteWriter::GgufLiteWriter(const Options& options, Context& context)
    : context_(context),
      kernels_(kernels::plugin_dequant_table()),
      rules_(options),
      report_(options.get_bool("report", false)) {}

GgufLiteWriter::~GgufLiteWriter() = default;

void GgufLiteWriter::prepare(const ModelHeader& header, const fs::path& destination) {
    path_ = output_path(destination, header);
    plans_ = plan_tensors(header, rules_);
    for (const std::string& w : rules_.unused_rules(header)) context_.warn(w);
    metadata_ = metadata_to_store(header, plans_, context_);

    std::vector<std::string> notes;
    std::string text;
    try {
        text = encode_metadata(metadata_, notes);
    } catch (const Error& e) {
        throw e.with_file(header.source);
    }
    for (const std::string& n : notes) context_.warn(n);
    if (text.size() > std::numeric_limits<std::uint32_t>::max())
        throw Error("metadata needs " + std::to_string(text.size()) +
                        " bytes; GGUF-lite's metadata_len is a u32",
                    header.source);
    if (plans_.size() > std::numeric_limits<std::uint32_t>::max())
        throw Error("too many tensors for GGUF-lite's u32 count", header.source);

    preamble_.clear();
    put<std::uint32_t>(preamble_, magic);
    put<std::uint32_t>(preamble_, version);
    put<std::uint32_t>(preamble_, static_cast<std::uint32_t>(plans_.size()));
    put<std::uint32_t>(preamble_, static_cast<std::uint32_t>(text.size()));
    append(preamble_, text.data(), text.size());
    for (const TensorPlan& p : plans_) {
        put<std::uint16_t>(preamble_, static_cast<std::uint16_t>(p.name.size()));
        append(preamble_, p.name.data(), p.name.size());
        put<std::uint8_t>(preamble_, static_cast<std::uint8_t>(p.dims.size()));
        for (std::uint32_t d : p.dims) put<std::uint32_t>(preamble_, d);
        put<std::uint8_t>(preamble_, static_cast<std::uint8_t>(p.dtype));
        put<std::uint64_t>(preamble_, p.offset);
    }
    data_start_ = preamble_.size();
    sizes_ = size_table(plans_, text.size(), data_start_ - header_bytes - text.size());

    // The layout is fixed now, so the size table and the fallbacks are known even for
    // --dry-run.
    context_.report("gguflite.sizes", sizes_json(sizes_));
    context_.state_output_size(path_, sizes_.total());
    context_.report("gguflite.fallbacks", fallbacks_json(plans_));
    std::size_t unexpected = 0;  // 1-D norms staying F32 is the normal case, not worth a warning
    for (const TensorPlan& p : plans_) unexpected += !p.fallback.empty() && p.dims.size() >= 2;
    if (unexpected > 0)
        context_.warn(std::to_string(unexpected) + (unexpected == 1 ? " tensor" : " tensors") +
                      " of 2 or more dims could not take the scheme (the report's "
                      "gguflite.fallbacks lists them)");
}

void GgufLiteWriter::begin(OutputSink& out) {
    file_ = &out.create(path_);
    file_->write(preamble_);
    preamble_ = {};
    next_ = 0;
    if (report_) check_ = std::make_unique<RoundTripCheck>(file_->temp_path());
}

void GgufLiteWriter::write(std::size_t index, const TensorView& tensor) {
    const TensorPlan& p = plans_.at(index);
    if (index != next_) throw tensor_error("tensors must arrive in header order", p.name);
    support::check_tensor_bytes(tensor, p.source_bytes, p.name);
    const std::uint64_t start = file_->size();
    if (start != data_start_ + p.offset)
        throw tensor_error("output is at byte " + std::to_string(start) + ", the layout says " +
                               std::to_string(data_start_ + p.offset),
                           p.name, path_.string());
    encode(p, tensor);
    if (check_) {
        flush_output();
        SourceValues source(p, tensor.bytes(), kernels_);
        ConsumedPages pages(tensor);
        check_->check_tensor(p, start, source, pages);
    }
    ++next_;
}

void GgufLiteWriter::finish() {
    if (next_ != plans_.size())
        throw Error("only " + std::to_string(next_) + " of " + std::to_string(plans_.size()) +
                    " tensors were written");
    if (!check_) return;
    flush_output();
    check_->check_file(metadata_, plans_, data_start_, path_.string());
    context_.report("gguflite.round_trip", round_trip_json(*check_));
    print_report(std::cerr, path_.string(), plans_, sizes_, *check_);
    if (!check_->passed())
        throw Error(
            "round-trip check failed: the file does not decode to the writer's own fake "
            "quantization (see the table above)",
            path_.string());
}

// Puts every byte written so far in the file, for reading back.
void GgufLiteWriter::flush_output() {
    file_->flush();
}

void GgufLiteWriter::encode(const TensorPlan& p, const TensorView& tensor) {
    const std::span<const std::byte> bytes = tensor.bytes();
    ConsumedPages pages(tensor);
    if (p.source == Source::copy) {
        for (std::uint64_t done = 0; done < bytes.size(); done += copy_chunk_bytes) {
            const auto piece =
                bytes.subspan(done, std::min<std::uint64_t>(copy_chunk_bytes, bytes.size() - done));
            file_->write(piece);
            pages.release_before(piece.data() + piece.size());
        }
        return;
    }
    SourceValues source(p, bytes, kernels_);
    if (is_quantized(p.dtype))
        encode_quantized(p, source, pages);
    else
        encode_floats(p, source, pages);
    if (source.inexact() > 0)
        context_.warn("tensor '" + p.name + "': " + std::to_string(source.inexact()) +
                      " values of type " + std::string(type_name(p.source_type)) +
                      " are not exact in F32");
}

void GgufLiteWriter::encode_floats(const TensorPlan& p, SourceValues& source,
                                   ConsumedPages& pages) {
    const std::uint64_t block = source.block_size();
    const std::uint64_t item = std::max<std::uint64_t>(chunk_elements / block, 1) * block;
    const std::uint64_t step = item * items_per_step;
    std::vector<float> values[2] = {std::vector<float>(step), std::vector<float>(step)};
    const std::size_t half_count = p.dtype == Dtype::f16 ? step : 0;
    std::vector<std::uint16_t> halves[2] = {std::vector<std::uint16_t>(half_count),
                                            std::vector<std::uint16_t>(half_count)};
    in_steps((p.elements + step - 1) / step,
             [&](std::uint64_t k, std::size_t b) {
                 const std::uint64_t first = k * step, n = std::min(step, p.elements - first);
                 // Items of whole source blocks go to the pool.
                 ck::parallel_chunks(n, item, [&](std::size_t begin, std::size_t end) {
                     source.read(first + begin, end - begin, values[b].data() + begin);
                     // Host values to the file's little-endian bytes.
                     if (p.dtype == Dtype::f16)
                         for (std::size_t i = begin; i < end; ++i)
                             ck::le::store(&halves[b][i], kernels::f32_to_f16(values[b][i]));
                     else
                         ck::le::in_place(values[b].data() + begin, end - begin);
                 });
             },
             [&](std::uint64_t k, std::size_t b) {
                 const std::uint64_t first = k * step, n = std::min(step, p.elements - first);
                 if (p.dtype == Dtype::f32)
                     file_->write(values[b].data(), n * sizeof(float));
                 else
                     file_->write(halves[b].data(), n * sizeof(std::uint16_t));
                 const auto used = source.bytes_of(first, n);
                 pages.release_before(used.data() + used.size());
             });
}

// Scales come first in the file but are known only once every row has been quantized: their
// room is reserved with zeros and patched when the tensor is done, so the values stream out
// as they are made and no tensor is held whole.
void GgufLiteWriter::encode_quantized(const TensorPlan& p, SourceValues& source,
                                      ConsumedPages& pages) {
    const QuantLayout layout = quant_layout(p.dtype, p.dims[0], p.dims[1]);
    const std::uint64_t cols = layout.cols;
    const std::uint64_t rows_per_item = std::max<std::uint64_t>(chunk_elements / cols, 1);
    const std::uint64_t rows_per_step = rows_per_item * items_per_step;
    // Each of the two step buffers: its values (per item, rows_per_item rows) and its codes.
    std::vector<float> values[2] = {std::vector<float>(rows_per_step * cols),
                                    std::vector<float>(rows_per_step * cols)};
    std::vector<std::uint8_t> packed[2] = {
        std::vector<std::uint8_t>(rows_per_step * layout.row_value_bytes),
        std::vector<std::uint8_t>(rows_per_step * layout.row_value_bytes)};
    std::vector<std::uint16_t> scales(layout.rows * layout.scales_per_row);
    const std::uint64_t start = file_->size();
    file_->write_zeros(layout.scale_bytes());
    in_steps((layout.rows + rows_per_step - 1) / rows_per_step,
             [&](std::uint64_t k, std::size_t b) {
                 const std::uint64_t row = k * rows_per_step;
                 const std::uint64_t n = std::min(rows_per_step, layout.rows - row);
                 // Groups of rows go to the pool (rows are independent).
                 ck::parallel_chunks(n, rows_per_item, [&](std::size_t begin, std::size_t end) {
                     float* const v = values[b].data();
                     source.read((row + begin) * cols, (end - begin) * cols, v + begin * cols);
                     for (std::size_t r = begin; r < end; ++r) {
                         const float* w = v + r * cols;
                         std::uint8_t* out = packed[b].data() + r * layout.row_value_bytes;
                         std::uint16_t* s = scales.data() + (row + r) * layout.scales_per_row;
                         if (p.dtype == Dtype::q8)
                             *s = quantize_q8_row(w, cols, reinterpret_cast<std::int8_t*>(out),
                                                  nullptr);
                         else
                             quantize_q4_row(w, cols, s, out, nullptr);
                     }
                 });
             },
             [&](std::uint64_t k, std::size_t b) {
                 const std::uint64_t row = k * rows_per_step;
                 const std::uint64_t n = std::min(rows_per_step, layout.rows - row);
                 file_->write(packed[b].data(), n * layout.row_value_bytes);
                 const auto used = source.bytes_of(row * cols, n * cols);
                 pages.release_before(used.data() + used.size());
             });
    const auto non_finite = std::count_if(scales.begin(), scales.end(),
                                          [](std::uint16_t h) { return (h & 0x7c00) == 0x7c00; });
    ck::le::in_place(std::span(scales));  // host-order halves to the file's bytes
    file_->write_at(start, as_bytes_of(scales.data(), scales.size() * sizeof(std::uint16_t)));
    if (non_finite > 0)
        context_.warn("tensor '" + p.name + "': " + std::to_string(non_finite) + " of " +
                      std::to_string(scales.size()) +
                      " scales overflow f16 (weights beyond its range, or inf/NaN): those "
                      "values dequantize to NaN");
}

}  // namespace ckplugin::gguflite
