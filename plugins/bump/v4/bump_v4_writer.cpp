#include "bump_v4_writer.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "bump_format.hpp"
#include "ck/conventions/output_bytes.hpp"
#include "ck/error.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/llama/llama_keys.hpp"
#include "ck/support/destination.hpp"
#include "ck/support/tensor_io.hpp"
#include "config_json.hpp"
#include "hashed_payload.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
using namespace ck;
namespace {

constexpr std::string_view manifest_name = "weights_manifest.json";
constexpr std::string_view map_name = "weights_map.json";
// About 1 MiB of output per step: small next to the 64 MiB budget, large enough that the
// per-step overhead (hash hand-off, write call) is noise.
constexpr std::size_t step_bytes = 1u << 20;
constexpr std::size_t copy_chunk = 4u << 20;

std::optional<fs::path> path_option(const Options& options, const std::string& key) {
    if (!options.has(key)) return std::nullopt;
    if (options.get(key).empty())
        throw usage_error("option " + key + ": expected a path, e.g. bump[version=4," + key +
                          "=out/file.json]");
    return fs::path(options.get(key));
}

}  // namespace

BumpV4Writer::BumpV4Writer(const Options& options, Context& context)
    : context_(context),
      context_length_(context_option(options)),
      config_override_(path_option(options, "config")),
      manifest_override_(path_option(options, "manifest")),
      map_override_(path_option(options, "map")) {}

void BumpV4Writer::prepare(const ModelHeader& header, const fs::path& destination) {
    header_ = header;
    // First: no other change to the model gets past this.
    refuse_rope_scaling(header_, "bump v4");
    try {
        plan_ = v4::plan(header_, v4::PlanOptions{context_length_});
    } catch (const Error& e) {
        if (e.file().empty() && !header_.source.empty()) throw e.with_file(header_.source);
        throw;
    }

    // The same destination rules as v3: `-o DIR/` or a new path without .bump is a directory.
    bool new_directory = false;
    bump_path_ = bump_file_path(destination, new_directory);
    const fs::path dir = bump_path_.parent_path();
    config_path_ = config_override_.value_or(dir / config_file_name);
    manifest_path_ = manifest_override_.value_or(dir / manifest_name);
    map_path_ = map_override_.value_or(dir / map_name);
    const std::vector<fs::path> all = outputs();
    for (std::size_t i = 0; i < all.size(); ++i)
        for (std::size_t j = i + 1; j < all.size(); ++j)
            if (all[i].lexically_normal() == all[j].lexically_normal())
                throw usage_error("two of bump v4's outputs would be the same file: " +
                                  all[i].string());
    if (new_directory)
        context_.note("bump: -o " + destination.string() +
                      " does not exist and has no .bump extension: it is taken as a new "
                      "directory, holding " +
                      bump_path_.string() + " and its JSON files");
    warn_unwritten(context_, plan_.unused, "bump v4");

    conventions::report_output_bytes(context_, bump_path_, plan_.file_bytes);
    conventions::report_output_bytes(context_, config_path_,
                                     render_config_json(plan_.config).size());
    conventions::report_output_bytes(context_, manifest_path_,
                                     v4::render_manifest(plan_, bump_path_.string()).size());
    conventions::report_output_bytes(context_, map_path_, v4::render_map(plan_).size());

    std::vector<std::uint8_t> codes;
    for (const v4::Entry& e : plan_.entries) codes.push_back(e.dtype);
    table_bytes_ = dtype_table_bytes(codes);
}

std::vector<fs::path> BumpV4Writer::outputs() const {
    return {bump_path_, manifest_path_, map_path_, config_path_};
}

std::vector<std::size_t> BumpV4Writer::order() const {
    std::vector<std::size_t> order;
    for (const v4::Entry& e : plan_.entries)
        for (const v4::Piece& p : e.pieces) order.push_back(p.tensor);
    return order;
}

void BumpV4Writer::begin(OutputSink& out) {
    auto text_file = [&](const fs::path& path, const std::string& text) {
        out.create(path).write(text.data(), text.size());
    };
    // Deliberate difference 5: weights_path is the bump file's path as the user gave it.
    text_file(manifest_path_, v4::render_manifest(plan_, bump_path_.string()));
    text_file(map_path_, v4::render_map(plan_));
    text_file(config_path_, render_config_json(plan_.config));

    payload_.start(out.create(bump_path_), v4::header_bytes, table_bytes_);  // header: finish()
    entry_ = 0;
    piece_ = 0;
}

// The buffer not queued last; waiting first means the hasher is done with it.
std::span<std::byte> BumpV4Writer::next_buffer(std::size_t bytes) {
    current_ ^= 1;
    auto& b = buffers_[current_];
    if (b.size() < bytes) b.resize(bytes);
    return std::span(b).first(bytes);
}

void BumpV4Writer::write(std::size_t index, const TensorView& tensor) {
    if (!payload_.started()) throw Error("bump writer: write() before begin()");
    const TensorInfo& t = header_.tensors.at(index);
    support::check_tensor_bytes(tensor, t.nbytes, t.name);
    if (entry_ == plan_.entries.size() || plan_.entries[entry_].pieces.at(piece_).tensor != index)
        throw tensor_error(
            "tensors must arrive in the writer's order (expected entry " +
                (entry_ < plan_.entries.size() ? plan_.entries[entry_].name : "none") + ")",
            t.name);
    const v4::Piece& piece = plan_.entries[entry_].pieces[piece_];
    try {
        if (!piece.dequantize)
            copy_rows(piece, tensor);
        else if (piece.wo_per_head)
            dequantize_wo(piece, tensor);
        else
            dequantize_rows(piece, tensor);
    } catch (...) {
        payload_.wait();  // the buffers and the mapping must outlive the queued spans
        throw;
    }
    payload_.wait();
    if (++piece_ == plan_.entries[entry_].pieces.size()) {
        ++entry_;
        piece_ = 0;
    }
}

// K-quant rows, block for block: straight from the input mapping, chunk by chunk so a large
// tensor never becomes resident as a whole; zero rows after each head when it is padded.
void BumpV4Writer::copy_rows(const v4::Piece& piece, const TensorView& tensor) {
    const TensorInfo& t = header_.tensors[piece.tensor];
    const std::uint64_t row = *row_bytes(t.type, piece.in_cols);
    const std::uint64_t group_bytes = piece.in_rows * row;
    auto bytes = tensor.bytes();
    for (std::uint64_t g = 0; g < piece.groups; ++g) {
        for (std::uint64_t done = 0; done < group_bytes; done += copy_chunk) {
            const std::size_t begin = g * group_bytes + done;
            const std::size_t end = g * group_bytes + std::min(group_bytes, done + copy_chunk);
            payload_.emit(bytes.subspan(begin, end - begin));
            payload_.wait();
            tensor.release(begin, end);
        }
        payload_.emit_zeros((piece.out_rows - piece.in_rows) * row);
    }
}

// Everything else: a block of rows dequantized to F32 (ggml's own to_float, bit for bit),
// each row followed by its zero padding, written; never the whole tensor in F32.
void BumpV4Writer::dequantize_rows(const v4::Piece& piece, const TensorView& tensor) {
    const TensorInfo& t = header_.tensors[piece.tensor];
    const auto dequant = kernels::plugin_dequant_table().fn[t.type];
    if (!dequant) throw tensor_error("no dequantizer", t.name);
    const std::uint64_t row = *row_bytes(t.type, piece.in_cols);
    const std::size_t block_rows =
        std::max<std::size_t>(1, step_bytes / (piece.out_cols * sizeof(float)));
    const bool padded = piece.out_cols != piece.in_cols;
    if (padded && rows_.size() < block_rows * piece.in_cols)
        rows_.resize(block_rows * piece.in_cols);
    auto bytes = tensor.bytes();
    for (std::uint64_t g = 0; g < piece.groups; ++g) {
        for (std::uint64_t r = 0; r < piece.in_rows; r += block_rows) {
            const std::size_t n = std::min<std::uint64_t>(block_rows, piece.in_rows - r);
            const std::size_t first = (g * piece.in_rows + r) * row;
            auto out = next_buffer(n * piece.out_cols * sizeof(float));
            auto* dst = reinterpret_cast<float*>(out.data());
            if (!padded) {
                dequant(bytes.data() + first, dst, n * piece.in_cols);
            } else {
                dequant(bytes.data() + first, rows_.data(), n * piece.in_cols);
                std::fill(dst, dst + n * piece.out_cols, 0.0f);
                for (std::size_t i = 0; i < n; ++i)
                    std::copy_n(rows_.data() + i * piece.in_cols, piece.in_cols,
                                dst + i * piece.out_cols);
            }
            payload_.wait();
            payload_.emit(out);
            tensor.release(first, first + n * row);
        }
        payload_.emit_zeros((piece.out_rows - piece.in_rows) * piece.out_cols * sizeof(float));
    }
}

// attn_output in F32: per head, every output row's columns of that head, padded to the
// aligned head size, then the zero rows up to the aligned embedding size. The source rows
// are dequantized again for each head: a block of them at a time, never the whole matrix.
void BumpV4Writer::dequantize_wo(const v4::Piece& piece, const TensorView& tensor) {
    const TensorInfo& t = header_.tensors[piece.tensor];
    const auto dequant = kernels::plugin_dequant_table().fn[t.type];
    if (!dequant) throw tensor_error("no dequantizer", t.name);
    const std::uint64_t row = *row_bytes(t.type, piece.in_cols);
    const std::size_t block_rows =
        std::max<std::size_t>(1, step_bytes / (piece.in_cols * sizeof(float)));
    if (rows_.size() < block_rows * piece.in_cols) rows_.resize(block_rows * piece.in_cols);
    auto bytes = tensor.bytes();
    for (std::uint64_t h = 0; h < piece.groups; ++h) {
        for (std::uint64_t r = 0; r < piece.in_rows; r += block_rows) {
            const std::size_t n = std::min<std::uint64_t>(block_rows, piece.in_rows - r);
            dequant(bytes.data() + r * row, rows_.data(), n * piece.in_cols);
            auto out = next_buffer(n * piece.aligned_head_dim * sizeof(float));
            auto* dst = reinterpret_cast<float*>(out.data());
            std::fill(dst, dst + n * piece.aligned_head_dim, 0.0f);
            for (std::size_t i = 0; i < n; ++i)
                std::copy_n(rows_.data() + i * piece.in_cols + h * piece.head_dim, piece.head_dim,
                            dst + i * piece.aligned_head_dim);
            payload_.wait();
            payload_.emit(out);
        }
        payload_.emit_zeros((piece.out_rows - piece.in_rows) * piece.aligned_head_dim *
                            sizeof(float));
    }
    tensor.release(0, bytes.size());
}

void BumpV4Writer::finish() {
    if (!payload_.started()) throw Error("bump writer: finish() before begin()");
    payload_.wait();
    if (entry_ != plan_.entries.size())
        throw Error("only " + std::to_string(entry_) + " of " +
                    std::to_string(plan_.entries.size()) +
                    " entries were written (next: " + plan_.entries[entry_].name + ")");
    if (payload_.file().size() != plan_.file_bytes)
        throw Error("wrote " + std::to_string(payload_.file().size()) + " bytes, planned " +
                        std::to_string(plan_.file_bytes),
                    bump_path_.string());
    v4::Header h = plan_.header;
    h.checksum = payload_.digest();
    auto bytes = v4::encode_header(h);
    payload_.file().write_at(0, bytes);
}

}  // namespace ckplugin::bump
