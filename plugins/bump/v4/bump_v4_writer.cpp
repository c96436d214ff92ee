#include "bump_v4_writer.hpp"

#include <algorithm>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"
#include "config_json.hpp"

namespace fs = std::filesystem;

namespace ckplugin::bump {
using namespace ck;
namespace {

constexpr std::string_view manifest_name = "weights_manifest.json";
constexpr std::string_view map_name = "weights_map.json";
// About 1 MiB of output per step: small next to the 64 MiB budget, large enough that the
// per-step overhead (hash hand-off, write call) is noise.
constexpr std::size_t step_bytes = 1u << 20;

// ggml's own to_float for the tensor's type, bit for bit.
kernels::DequantFn dequantizer_of(const TensorInfo& t) {
    const auto dequant = kernels::plugin_dequant_table().fn[t.type];
    if (!dequant) throw tensor_error("no dequantizer", t.name);
    return dequant;
}

// weights_path=given|relative. The host refuses other values from the option's choices before
// any plugin runs; a writer made in process (tests, fuzzing) gets the same answer here.
bool relative_weights_path(const Options& options) {
    const std::string form = options.get("weights_path", "given");
    if (form != "given" && form != "relative")
        throw usage_error("option weights_path=" + form + ": expected given or relative");
    return form == "relative";
}

// How many source rows of `cols` F32 elements make about one step of output.
std::size_t rows_per_step(std::uint64_t cols) {
    return std::max<std::size_t>(1, step_bytes / (cols * sizeof(float)));
}

}  // namespace

BumpV4Writer::BumpV4Writer(const Options& options, Context& context)
    : PayloadWriter(options, context, "bump v4", "bump[version=4,"),
      manifest_override_(path_option(options, "manifest")),
      map_override_(path_option(options, "map")),
      relative_weights_path_(relative_weights_path(options)) {}

std::string BumpV4Writer::manifest_weights_path() const {
    // Deliberate difference 5: by default the bump file's path as the user gave it.
    if (!relative_weights_path_) return bump_path_.string();
    // Folders resolved (symlinks too), the file names kept: the writer replaces the files
    // themselves, never what a link points to.
    auto folder = [](const fs::path& file) {
        const fs::path absolute = fs::absolute(file).parent_path();
        std::error_code ec;
        const fs::path resolved = fs::weakly_canonical(absolute, ec);
        return ec ? absolute.lexically_normal() : resolved;
    };
    const fs::path relative =
        (folder(bump_path_) / bump_path_.filename()).lexically_relative(folder(manifest_path_));
    return relative.empty() ? fs::absolute(bump_path_).string() : relative.string();
}

void BumpV4Writer::prepare(const ModelHeader& header, const fs::path& destination) {
    plan_input(header, [&] { plan_ = v4::plan(header_, v4::PlanOptions{context_length_}); });

    // The same destination rules as v3: `-o DIR/` or a new path without .bump is a directory.
    const bool new_directory = place_outputs(destination);
    const fs::path dir = bump_path_.parent_path();
    manifest_path_ = manifest_override_.value_or(dir / manifest_name);
    map_path_ = map_override_.value_or(dir / map_name);
    check_outputs(destination, new_directory, "its JSON files");
    warn_unwritten(plan_.unused);

    context_.state_output_size(bump_path_, plan_.file_bytes);
    context_.state_output_size(config_path_, render_config_json(plan_.config).size());
    manifest_text_ = v4::render_manifest(plan_, manifest_weights_path());
    context_.state_output_size(manifest_path_, manifest_text_.size());
    context_.state_output_size(map_path_, v4::render_map(plan_).size());

    std::vector<std::uint8_t> codes;
    for (const v4::Entry& e : plan_.entries) codes.push_back(e.dtype);
    set_dtype_table(codes);
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
    text_file(manifest_path_, manifest_text_);
    text_file(map_path_, v4::render_map(plan_));
    text_file(config_path_, render_config_json(plan_.config));

    start_payload(out);
    entry_ = 0;
    piece_ = 0;
}

void BumpV4Writer::write(std::size_t index, const TensorView& tensor) {
    expect_started("write");
    const TensorInfo& t = header_.tensors.at(index);
    support::check_tensor_bytes(tensor, t.nbytes, t.name);
    if (entry_ == plan_.entries.size() || plan_.entries[entry_].pieces.at(piece_).tensor != index)
        refuse_order(t.name, "entry",
                     entry_ < plan_.entries.size() ? plan_.entries[entry_].name : "none");
    const v4::Piece& piece = plan_.entries[entry_].pieces[piece_];
    {
        WaitForHasher wait(payload_);  // the buffers and the mapping outlive the queued spans
        if (!piece.dequantize)
            copy_rows(piece, tensor);
        else if (piece.wo_per_head)
            dequantize_wo(piece, tensor);
        else
            dequantize_rows(piece, tensor);
    }
    if (++piece_ == plan_.entries[entry_].pieces.size()) {
        ++entry_;
        piece_ = 0;
    }
}

// K-quant rows, block for block: straight from the input mapping, chunk by chunk so a large
// tensor never becomes resident as a whole; zero rows after each head when it is padded.
void BumpV4Writer::copy_rows(const v4::Piece& piece, const TensorView& tensor) {
    const std::uint64_t row = *row_bytes(header_.tensors[piece.tensor].type, piece.in_cols);
    const std::uint64_t group_bytes = piece.in_rows * row;
    for (std::uint64_t g = 0; g < piece.groups; ++g) {
        payload_.emit_released(tensor, g * group_bytes, (g + 1) * group_bytes);
        payload_.emit_zeros((piece.out_rows - piece.in_rows) * row);
    }
}

// Everything else: a block of rows dequantized to F32 (ggml's own to_float, bit for bit),
// each row followed by its zero padding, written; never the whole tensor in F32.
void BumpV4Writer::dequantize_rows(const v4::Piece& piece, const TensorView& tensor) {
    const TensorInfo& t = header_.tensors[piece.tensor];
    const auto dequant = dequantizer_of(t);
    const std::uint64_t row = *row_bytes(t.type, piece.in_cols);
    const std::size_t block_rows = rows_per_step(piece.out_cols);
    const bool padded = piece.out_cols != piece.in_cols;
    if (padded && rows_.size() < block_rows * piece.in_cols)
        rows_.resize(block_rows * piece.in_cols);
    auto bytes = tensor.bytes();
    for (std::uint64_t g = 0; g < piece.groups; ++g) {
        for (std::uint64_t r = 0; r < piece.in_rows; r += block_rows) {
            const std::size_t n = std::min<std::uint64_t>(block_rows, piece.in_rows - r);
            const std::size_t first = (g * piece.in_rows + r) * row;
            auto out = payload_.next_buffer(n * piece.out_cols * sizeof(float));
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
            ck::le::in_place(dst, n * piece.out_cols);  // the file's byte order
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
    const auto dequant = dequantizer_of(t);
    const std::uint64_t row = *row_bytes(t.type, piece.in_cols);
    const std::size_t block_rows = rows_per_step(piece.in_cols);
    if (rows_.size() < block_rows * piece.in_cols) rows_.resize(block_rows * piece.in_cols);
    auto bytes = tensor.bytes();
    for (std::uint64_t h = 0; h < piece.groups; ++h) {
        for (std::uint64_t r = 0; r < piece.in_rows; r += block_rows) {
            const std::size_t n = std::min<std::uint64_t>(block_rows, piece.in_rows - r);
            dequant(bytes.data() + r * row, rows_.data(), n * piece.in_cols);
            auto out = payload_.next_buffer(n * piece.aligned_head_dim * sizeof(float));
            auto* dst = reinterpret_cast<float*>(out.data());
            std::fill(dst, dst + n * piece.aligned_head_dim, 0.0f);
            for (std::size_t i = 0; i < n; ++i)
                std::copy_n(rows_.data() + i * piece.in_cols + h * piece.head_dim, piece.head_dim,
                            dst + i * piece.aligned_head_dim);
            ck::le::in_place(dst, n * piece.aligned_head_dim);  // the file's byte order
            payload_.wait();
            payload_.emit(out);
        }
        payload_.emit_zeros((piece.out_rows - piece.in_rows) * piece.aligned_head_dim *
                            sizeof(float));
    }
    tensor.release(0, bytes.size());
}

void BumpV4Writer::finish() {
    expect_started("finish");
    finish_payload(entry_, plan_.entries.size(),
                   entry_ < plan_.entries.size() ? plan_.entries[entry_].name : "", "entry",
                   plan_.file_bytes, [&](const Digest& digest) {
                       v4::Header h = plan_.header;
                       h.checksum = digest;
                       return v4::encode_header(h);
                   });
}

}  // namespace ckplugin::bump
