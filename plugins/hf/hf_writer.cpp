#include "hf_writer.hpp"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "ck/byte_size.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/parallel.hpp"
#include "ck/safetensors/format.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"

namespace fs = std::filesystem;

namespace ckplugin::hf {
namespace {

using Action = TensorExport::Action;
using ck::GgmlType;

constexpr std::string_view config_file = "config.json";
// save_pretrained's default max_shard_size, "5GB": 5 * 10^9 bytes.
constexpr std::uint64_t default_max_shard_bytes = 5'000'000'000;
// Values converted per thread and piece of a block (the dequant transform's item).
constexpr std::uint64_t piece_values_per_thread = 1 << 20;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

std::optional<std::uint32_t> dtype_option(const ck::Options& options) {
    if (!options.has("dtype")) return std::nullopt;
    const std::string dtype = options.get("dtype");
    return dtype == "f32"   ? id(GgmlType::f32)
           : dtype == "f16" ? id(GgmlType::f16)
                            : id(GgmlType::bf16);
}

std::uint64_t max_shard_option(const ck::Options& options) {
    if (!options.has("max_shard_size")) return default_max_shard_bytes;
    const std::string text = options.get("max_shard_size");
    // transformers' reading: 5GB = 5 * 10^9, 2GiB = 2 * 2^30, or a byte count.
    const auto bytes = ck::parse_byte_size(text, ck::BareUnit::decimal);
    if (!bytes)
        throw ck::usage_error("hf: option max_shard_size='" + text + "' is not a size; give " +
                              ck::byte_size_forms(ck::BareUnit::decimal));
    return *bytes;
}

std::string_view torch_dtype(std::uint32_t dtype) {
    return dtype == id(GgmlType::f32)   ? "float32"
           : dtype == id(GgmlType::f16) ? "float16"
                                        : "bfloat16";
}

std::string_view dtype_name(std::uint32_t dtype) {
    return ck::safetensors::dtype_for(dtype)->name;
}

std::uint64_t elements_of(const std::vector<std::int64_t>& shape) {
    std::uint64_t n = 1;
    for (const std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
    return n;
}

// config.json comes from the hyperparameters, the special token ids and the tensors, never from
// the vocabulary: the copy kept for it until the generated tensors are read leaves out the
// tokenizer's arrays (tens of MB for a 128k-token BPE vocabulary and its merges).
ck::ModelHeader header_for_config(const ck::ModelHeader& header) {
    ck::ModelHeader copy;
    copy.source = header.source;
    copy.format = header.format;
    copy.tensors = header.tensors;
    for (const auto& [key, value] : header.metadata)
        if (!key.starts_with("tokenizer.ggml.") || value.type() != ck::ValueType::array)
            copy.metadata.set(key, value);
    return copy;
}

// What becomes of a GGUF tensor, for --dry-run and the JSON plan.
std::string reason(const TensorExport& e, const ck::TensorInfo& t, std::uint32_t dtype) {
    if (e.action == Action::generated) return "read for config.json's rope_scaling: not a weight";
    std::string text =
        e.action == Action::split_experts
            ? std::to_string(e.parts.size()) + " experts, " + e.parts.front().name + " ..."
            : e.parts.front().name;
    text += " " + std::string(dtype_name(dtype));
    if (ck::find_type(t.type)->quantized) text += ", dequantized";
    if (e.action == Action::unpermute_rows) text += ", rows back in Hugging Face's rotary order";
    if (e.action == Action::unshift_norm) text += ", 1 taken off (Gemma stores 1 + w)";
    return text;
}

}  // namespace

HfWriter::HfWriter(const ck::Options& options, ck::Context& context)
    : context_(context),
      requested_class_(options.get("class")),
      requested_dtype_(dtype_option(options)),
      max_shard_bytes_(max_shard_option(options)) {}

std::uint32_t HfWriter::choose_dtype(const ck::ModelHeader& header) const {
    if (requested_dtype_) return *requested_dtype_;
    using FileType = ck::llama::FileType;
    std::optional<std::uint32_t> file_type = ck::llama::stored_file_type(header.metadata);
    if (!file_type)
        if (const auto guess = ck::llama::guess_file_type(header); guess.file_type)
            file_type = static_cast<std::uint32_t>(*guess.file_type);
    std::uint32_t dtype = id(GgmlType::bf16);
    if (file_type == static_cast<std::uint32_t>(FileType::all_f32)) dtype = id(GgmlType::f32);
    if (file_type == static_cast<std::uint32_t>(FileType::f16)) dtype = id(GgmlType::f16);
    const std::string source = file_type
                                   ? "general.file_type " + ck::llama::file_type_label(*file_type)
                                   : std::string("no general.file_type");
    const bool kept = file_type == static_cast<std::uint32_t>(FileType::all_f32) ||
                      file_type == static_cast<std::uint32_t>(FileType::f16) ||
                      file_type == static_cast<std::uint32_t>(FileType::bf16);
    context_.note("hf: weights written as " + std::string(dtype_name(dtype)) + " (" + source +
                  (kept ? ": the source's float type"
                        : ": quantized or mixed, so BF16, with quantized tensors dequantized") +
                  "; dtype=bf16|f16|f32 chooses)");
    return dtype;
}

void HfWriter::prepare(const ck::ModelHeader& header, const fs::path& destination) {
    // Every refusal comes here, before anything is written: the architecture, the tensors,
    // config.json's keys (the generated values aside), the tokenizer, the folder.
    target_ = choose_export_target(header, requested_class_);
    dtype_ = choose_dtype(header);
    plan_ = plan_export(header, *target_.architecture);
    tensors_ = header.tensors;
    plan_weights();
    const bool generated = generated_count_ > 0;
    config_text_ = hf_json_text(export_config(
        header, target_, torch_dtype(dtype_),
        generated ? std::nullopt : std::optional<GeneratedValues>(GeneratedValues{})));
    header_.reset();
    if (generated) header_ = header_for_config(header);  // config.json is made again with them
    files_ = {{"generation_config.json", hf_json_text(export_generation_config(header))}};
    // A GGUF with no tokenizer at all (weights made by a tool, not a converter) still gives a
    // model transformers loads; a tokenizer that is there but cannot be rebuilt is refused.
    if (header.metadata.contains("tokenizer.ggml.model"))
        for (ExportedFile& f : export_tokenizer(header, *target_.architecture))
            files_.push_back(std::move(f));
    else
        context_.warn(
            "hf: the model has no tokenizer (no tokenizer.ggml.model key), so the "
            "checkpoint gets no tokenizer files");
    folder_ = destination;
    check_folder();
    state_sizes();
    context_.note("hf: " + std::to_string(shards_.files.size()) + " safetensors file(s) in " +
                  folder_.string() + ", " + target_.hf_class);
}

// The write order (generated tensors first), the weights' Hugging Face tensors and their shards.
void HfWriter::plan_weights() {
    order_.clear();
    std::vector<std::size_t> weights;
    std::vector<ShardEntry> entries;
    std::unordered_set<std::string> names;
    const std::uint64_t value_bytes = ck::find_type(dtype_)->block_bytes;
    for (const TensorExport& e : plan_) {
        (e.action == Action::generated ? order_ : weights).push_back(e.source);
        context_.explain(tensors_[e.source].name, reason(e, tensors_[e.source], dtype_));
        for (const ExportedTensor& part : e.parts) {
            if (!names.insert(part.name).second)
                throw ck::tensor_error("two tensors become '" + part.name + "'",
                                       tensors_[e.source].name);
            entries.push_back(
                {part.name, dtype_name(dtype_), part.shape, elements_of(part.shape) * value_bytes});
        }
    }
    generated_count_ = order_.size();
    order_.insert(order_.end(), weights.begin(), weights.end());
    shards_ = plan_shards(entries, max_shard_bytes_);
}

std::vector<fs::path> HfWriter::outputs() const {
    std::vector<fs::path> paths = {folder_ / config_file};
    for (const ExportedFile& f : files_) paths.push_back(folder_ / f.name);
    for (const ShardFile& s : shards_.files) paths.push_back(folder_ / s.file_name);
    if (shards_.index) paths.push_back(folder_ / weights_index_file);
    return paths;
}

// Weights files of another export left in the folder would be read with these (a checkpoint is
// every model*.safetensors its index names, or model.safetensors): refused whatever --force
// says, which only allows replacing this export's own files.
void HfWriter::check_folder() const {
    std::error_code ec;
    const fs::file_status status = fs::status(folder_, ec);
    if (fs::exists(status) && !fs::is_directory(status))
        throw ck::file_error(
            "is not a folder: the hf writer writes a checkpoint folder (config.json, safetensors, "
            "tokenizer) at -o",
            folder_.string());
    if (!fs::is_directory(status)) return;
    std::set<std::string> ours, stale;
    for (const fs::path& p : outputs()) ours.insert(p.filename().string());
    for (const fs::directory_entry& entry : fs::directory_iterator(folder_, ec)) {
        const std::string name = entry.path().filename().string();
        if (is_weights_file(name) && !ours.count(name)) stale.insert(name);
    }
    if (!stale.empty())
        throw ck::file_error(
            "the folder holds weights this export does not write (" + std::to_string(stale.size()) +
                " file(s)); a reader of the checkpoint would mix them with the new ones: remove "
                "them or export to another folder (--force replaces only this export's files)",
            (folder_ / *stale.begin()).string());
}

void HfWriter::state_sizes() const {
    // config.json's size is the one known now: with generated tensors, their values add keys.
    context_.state_output_size(folder_ / config_file, config_text_.size());
    for (const ExportedFile& f : files_)
        context_.state_output_size(folder_ / f.name, f.bytes.size());
    for (const ShardFile& s : shards_.files)
        context_.state_output_size(folder_ / s.file_name, s.preamble.size() + s.data_bytes);
    if (shards_.index)
        context_.state_output_size(folder_ / weights_index_file, shards_.index->size());
}

void HfWriter::begin(ck::OutputSink& out) {
    config_file_ = &out.create(folder_ / config_file);
    for (const ExportedFile& f : files_) {
        ck::OutputFile& file = out.create(folder_ / f.name);
        file.write(f.bytes.data(), f.bytes.size());
        file.finish();
    }
    files_ = {};  // a tokenizer.json can be tens of MB
    std::vector<ck::OutputFile*> shard_files;
    for (const ShardFile& s : shards_.files)
        shard_files.push_back(&out.create(folder_ / s.file_name));
    if (shards_.index) {
        ck::OutputFile& index = out.create(folder_ / weights_index_file);
        index.write(shards_.index->data(), shards_.index->size());
        index.finish();
    }
    stream_.start(shard_files, shards_.files);
    for (ShardFile& s : shards_.files) s.preamble = {};
    next_ = 0;
    next_row_ = 0;
    carry_rows_ = 0;
    generated_ = {};
    generated_left_ = generated_count_;
    if (generated_left_ == 0) write_config();
}

void HfWriter::write_config() {
    if (header_) {
        config_text_ = hf_json_text(
            export_config(*header_, target_, torch_dtype(dtype_), std::optional(generated_)));
        header_.reset();
    }
    config_file_->write(config_text_.data(), config_text_.size());
    config_file_->finish();
}

void HfWriter::write(std::size_t index, const ck::TensorView& tensor) {
    take(index, {0, tensors_.at(index).rows()}, tensor);
}

void HfWriter::write_rows(std::size_t index, ck::RowRange rows, const ck::TensorView& block) {
    if (rows.count == 0) throw ck::tensor_error("an empty row block", tensors_.at(index).name);
    take(index, rows, block);
}

void HfWriter::take(std::size_t index, ck::RowRange rows, const ck::TensorView& block) {
    const ck::TensorInfo& t = tensors_.at(index);
    if (next_ == order_.size() || index != order_[next_] || rows.first != next_row_)
        throw ck::tensor_error(
            "tensors must arrive in the writer's order, each tensor's rows in order", t.name);
    if (rows.first + rows.count > t.rows())
        throw ck::tensor_error(
            "row block outside the tensor's " + std::to_string(t.rows()) + " rows", t.name);
    ck::support::check_tensor_bytes(block, rows.count * t.row_bytes(), t.name);
    const TensorExport& e = plan_[index];
    if (e.action == Action::generated)
        collect_generated(t, block, rows.count);
    else if (e.action == Action::unpermute_rows)
        take_heads(e, t, block, rows.count);
    else
        emit(e, t, block, rows.count);
    next_row_ += rows.count;
    if (next_row_ < t.rows()) return;
    if (carry_rows_ != 0) throw ck::plugin_bug("rows of a head left over", "hf writer");
    next_row_ = 0;
    ++next_;
    if (e.action == Action::generated && --generated_left_ == 0) write_config();
}

void HfWriter::collect_generated(const ck::TensorInfo& t, const ck::TensorView& block,
                                 std::uint64_t rows) {
    std::vector<float>* values = generated_values_of(generated_, t.name);
    if (!values) throw ck::plugin_bug("no config value for tensor '" + t.name + "'", "hf writer");
    const std::size_t first = values->size(), n = rows * static_cast<std::uint64_t>(t.ne[0]);
    values->resize(first + n);
    convert_values(block.data(), t.type, n, reinterpret_cast<std::byte*>(values->data() + first),
                   id(GgmlType::f32), false);
    // convert_values writes tensor bytes (little-endian F32); these are read as host floats.
    ck::le::in_place(values->data() + first, n);
}

// q/k rows: whole heads go on, the rows of a head cut by the block's end wait for the next
// block (the runner cuts blocks where it likes; a writer has no granule to ask for).
void HfWriter::take_heads(const TensorExport& e, const ck::TensorInfo& t,
                          const ck::TensorView& block, std::uint64_t rows) {
    const std::uint64_t row_bytes = t.row_bytes();
    std::uint64_t used = 0;
    if (carry_rows_ > 0) {
        used = std::min(e.head_rows - carry_rows_, rows);
        carry_.insert(carry_.end(), block.data(), block.data() + used * row_bytes);
        carry_rows_ += used;
        if (carry_rows_ < e.head_rows) return;
        emit(e, t, ck::TensorView::held(carry_, nullptr), e.head_rows);
        carry_.clear();
        carry_rows_ = 0;
    }
    const std::uint64_t whole = (rows - used) / e.head_rows * e.head_rows;
    if (whole > 0) emit(e, t, block.slice(used * row_bytes, whole * row_bytes), whole);
    carry_.assign(block.data() + (used + whole) * row_bytes, block.data() + rows * row_bytes);
    carry_rows_ = rows - used - whole;
    block.release(0, block.size());
}

// Rows [0, rows) of `rows_in` (whole heads for q/k) converted to the dtype and written: as they
// are when nothing changes, else a piece at a time through one reused buffer, so memory holds a
// piece (1 Mi values per thread) whatever the block's size.
void HfWriter::emit(const TensorExport& e, const ck::TensorInfo& t, const ck::TensorView& rows_in,
                    std::uint64_t rows) {
    const bool unshift = e.action == Action::unshift_norm;
    const bool unpermute = e.action == Action::unpermute_rows;
    const bool same_type = t.type == dtype_ && !unshift;
    if (same_type && !unpermute) return stream_.put(rows_in);
    if (rows == 0) return;
    const auto row_values = static_cast<std::uint64_t>(t.ne[0]);
    const std::uint64_t in_row = t.row_bytes();
    const std::uint64_t out_row = row_values * ck::find_type(dtype_)->block_bytes;
    const std::uint64_t unit = unpermute ? e.head_rows : 1;
    const std::uint64_t budget = piece_values_per_thread * ck::thread_count();
    const std::uint64_t piece = std::max(unit, budget / row_values / unit * unit);
    for (std::uint64_t first = 0; first < rows; first += piece) {
        const std::uint64_t n = std::min(piece, rows - first);
        const ck::TensorView part = rows_in.slice(first * in_row, n * in_row);
        std::span<const std::byte> out = part.bytes();
        if (!same_type) {
            const std::span<std::byte> buffer = scratch(n * out_row);
            convert_rows(part, t, n, dtype_, unshift, buffer);
            out = buffer;
        }
        if (unpermute)
            for_each_unpermuted_row(out, n, out_row, e.head_rows,
                                    [this](std::span<const std::byte> row) { stream_.put(row); });
        else
            stream_.put(out);
        part.release(0, part.size());
    }
}

std::span<std::byte> HfWriter::scratch(std::size_t bytes) {
    if (scratch_.bytes.size() < bytes) scratch_ = ck::TensorView::allocate(bytes);
    return scratch_.bytes.first(bytes);
}

void HfWriter::finish() {
    if (next_ != order_.size())
        throw ck::Error("only " + std::to_string(next_) + " of " + std::to_string(order_.size()) +
                        " tensors were written");
    stream_.check_complete();
    scratch_ = {};
    carry_ = {};
}

}  // namespace ckplugin::hf
