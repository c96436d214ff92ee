#include "safetensors_writer.hpp"

#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ck/conventions/repacked.hpp"
#include "ck/error.hpp"
#include "ck/safetensors/format.hpp"
#include "ck/safetensors/metadata_json.hpp"
#include "ck/support/destination.hpp"
#include "ck/support/tensor_io.hpp"
#include "ck/utf8.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ckplugin::safetensors {
using namespace ck;
// The container's rules and metadata encoding, shared with the readers (ckhost::safetensors).
using namespace ck::safetensors;
namespace {

// Hugging Face's library refuses headers longer than this.
constexpr std::uint64_t reference_header_limit = 100'000'000;

fs::path output_path(const fs::path& destination, const ModelHeader& header) {
    return support::single_file_destination(destination, header.source, ".safetensors");
}

// The repacked tensors the metadata declares, checked against the tensors: name -> format.
std::vector<std::pair<std::string, std::string>> repacked_pairs(const ModelHeader& header) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& [key, value] : header.metadata) {
        if (!key.starts_with(repack::metadata_prefix)) continue;
        const std::string name = key.substr(repack::metadata_prefix.size());
        const TensorInfo* codes = header.find_tensor(name);
        if (value.type() != ValueType::string || !codes)
            throw key_error("metadata says '" + name + "' is repacked, but " +
                                (codes ? "its format is not a string" : "there is no such tensor"),
                            key);
        const std::string& format = value.str();
        const std::string scales = name + std::string(repack::scales_suffix(format));
        if (auto problem = repack::check_pair(format, *codes, header.find_tensor(scales)))
            throw tensor_error(*problem, name);
        pairs.emplace_back(name, format);
    }
    return pairs;
}

// Adds one __metadata__ entry. Two keys that would be stored under the same entry are refused:
// one of them would silently be lost.
void add_metadata_entry(ordered_json& meta, const std::string& entry, std::string text,
                        const std::string& from_key) {
    if (meta.contains(entry))
        throw key_error(
            "two metadata keys would both be stored as __metadata__ entry '" + entry + "'",
            from_key);
    meta[entry] = std::move(text);
}

// Another tool's __metadata__ entry, kept by the reader under foreign_prefix, goes back under
// its own name (safetensors:safetensors gives back what it read) unless that name now means
// something else: one of our entries, a tensor, a repacked format, or an entry already made.
// The value must also be UTF-8, which JSON can hold as it is.
bool restores_under_own_name(const std::string& name, const Value& value, const ModelHeader& header,
                             const ordered_json& meta) {
    return name != format_entry && name != gguf_types_entry && !name.starts_with(gguf_prefix) &&
           !header.find_tensor(name) && repack::scales_suffix(value.str()).empty() &&
           !invalid_utf8_at(value.str()) && !meta.contains(name);
}

// __metadata__: our format tag, the repacked pairs, then every other key in order, with the
// GGUF type of each in one more entry so a reader gets the same values back.
ordered_json metadata_entries(const ModelHeader& header, Context& context) {
    ordered_json meta = ordered_json::object();
    ordered_json types = ordered_json::object();
    meta[std::string(format_entry)] = format_value;
    std::size_t replaced_keys = 0;
    for (const auto& [key, value] : header.metadata) {
        if (key.starts_with(repack::metadata_prefix)) {
            add_metadata_entry(meta, key.substr(repack::metadata_prefix.size()), value.str(), key);
            continue;
        }
        if (key.starts_with(foreign_prefix) && value.type() == ValueType::string) {
            const std::string name = key.substr(foreign_prefix.size());
            if (restores_under_own_name(name, value, header, meta)) {
                add_metadata_entry(meta, name, value.str(), key);
                continue;
            }
        }
        bool replaced = false;
        add_metadata_entry(meta, std::string(gguf_prefix) + key, to_json_text(value, replaced),
                           key);
        types[key] = type_label(value);
        if (replaced) ++replaced_keys;
    }
    if (replaced_keys > 0)
        context.warn(std::to_string(replaced_keys) +
                     " metadata value(s) held bytes that are not UTF-8; JSON cannot store them, "
                     "so they were replaced by U+FFFD");
    if (!types.empty())
        add_metadata_entry(meta, std::string(gguf_types_entry), types.dump(), "(types)");
    return meta;
}

// The safetensors dtype a tensor is stored as, after the checks a header entry needs: a name
// JSON can hold and no other tensor has, a type safetensors has, and a size that matches it.
const Dtype& storable_dtype(const TensorInfo& t, std::unordered_set<std::string_view>& names) {
    if (t.name == metadata_key) throw tensor_error("this name is reserved by safetensors", t.name);
    if (invalid_utf8_at(t.name))
        throw tensor_error("name is not UTF-8, which a safetensors header (JSON) cannot hold",
                           t.name);
    if (!names.insert(t.name).second) throw tensor_error("duplicate tensor name", t.name);
    const Dtype* dtype = dtype_for(t.type);
    if (!dtype)
        throw tensor_error("type " + std::string(type_name(t.type)) +
                               " has no safetensors dtype (F64, F32, F16, BF16, I64, I32, I16, I8, "
                               "U8); repack[to=int8] or dequant it first",
                           t.name);
    const auto bytes = tensor_bytes(t.type, t.ne);
    if (!bytes || *bytes != t.nbytes)
        throw tensor_error("byte size " + std::to_string(t.nbytes) + " does not match type " +
                               std::string(type_name(t.type)) + " and shape " + t.shape_string(),
                           t.name);
    return *dtype;
}

// One header entry per tensor, in order, the data packed without gaps (the format allows
// none); repacked codes are declared U8, whatever type carries them. Fills `tensors` (name,
// bytes) for write() and returns the size of the data section.
std::uint64_t add_tensor_entries(ordered_json& json, const ModelHeader& header,
                                 const std::unordered_set<std::string>& codes,
                                 std::vector<std::pair<std::string, std::uint64_t>>& tensors) {
    std::unordered_set<std::string_view> names;
    tensors.clear();
    std::uint64_t offset = 0;
    for (const TensorInfo& t : header.tensors) {
        const Dtype& dtype = storable_dtype(t, names);
        json[t.name] = {{"dtype", codes.count(t.name) ? "U8" : dtype.name},
                        {"shape", reversed(t.ne)},
                        {"data_offsets", {offset, offset + t.nbytes}}};
        tensors.emplace_back(t.name, t.nbytes);
        offset += t.nbytes;
    }
    return offset;
}

// What comes before the data: the header's length (8 bytes, little-endian), then the header,
// padded with spaces so the data starts aligned.
std::string header_preamble(const ordered_json& json, Context& context) {
    std::string preamble = ck::safetensors::file_preamble(
        json.dump(-1, ' ', false, ordered_json::error_handler_t::replace));
    if (const std::size_t header = preamble.size() - 8; header > reference_header_limit)
        context.warn("the safetensors header is " + std::to_string(header) +
                     " bytes; Hugging Face's safetensors library refuses headers over " +
                     std::to_string(reference_header_limit));
    return preamble;
}

}  // namespace

void SafetensorsWriter::prepare(const ModelHeader& header, const fs::path& destination) {
    path_ = output_path(destination, header);
    std::unordered_set<std::string> codes;
    for (const auto& [name, format] : repacked_pairs(header)) codes.insert(name);

    ordered_json json = ordered_json::object();
    json[std::string(metadata_key)] = metadata_entries(header, context_);
    const std::uint64_t data_bytes = add_tensor_entries(json, header, codes, tensors_);
    preamble_ = header_preamble(json, context_);
    context_.state_output_size(path_, preamble_.size() + data_bytes);
}

void SafetensorsWriter::begin(OutputSink& out) {
    file_ = &out.create(path_);
    file_->write(preamble_.data(), preamble_.size());
    preamble_ = {};
    next_ = 0;
}

void SafetensorsWriter::write(std::size_t index, const TensorView& tensor) {
    const auto& [name, bytes] = tensors_.at(index);
    if (index != next_) throw tensor_error("tensors must arrive in header order", name);
    support::check_tensor_bytes(tensor, bytes, name);
    support::write_streaming(*file_, tensor);
    ++next_;
}

void SafetensorsWriter::finish() {
    if (next_ != tensors_.size())
        throw Error("only " + std::to_string(next_) + " of " + std::to_string(tensors_.size()) +
                    " tensors were written");
}

}  // namespace ckplugin::safetensors
