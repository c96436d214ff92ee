#include "safetensors_writer.hpp"

#include <boost/endian/conversion.hpp>

#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ck/conventions/output_bytes.hpp"
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

}  // namespace

void SafetensorsWriter::prepare(const ModelHeader& header, const fs::path& destination) {
    path_ = output_path(destination, header);
    const auto pairs = repacked_pairs(header);
    std::unordered_set<std::string> codes;
    for (const auto& [name, format] : pairs) codes.insert(name);

    // __metadata__: our format tag, the repacked pairs, then every other key in order.
    ordered_json meta = ordered_json::object();
    ordered_json types = ordered_json::object();
    meta[std::string(format_entry)] = format_value;
    auto add = [&](const std::string& key, std::string text, const std::string& from) {
        if (meta.contains(key))
            throw key_error(
                "two metadata keys would both be stored as __metadata__ entry '" + key + "'", from);
        meta[key] = std::move(text);
    };
    std::size_t replaced_keys = 0;
    for (const auto& [key, value] : header.metadata) {
        if (key.starts_with(repack::metadata_prefix)) {
            const std::string name = key.substr(repack::metadata_prefix.size());
            add(name, value.str(), key);
            continue;
        }
        // Another tool's entries come back under their own names (safetensors:safetensors).
        if (key.starts_with(foreign_prefix) && value.type() == ValueType::string) {
            const std::string name = key.substr(foreign_prefix.size());
            if (name != format_entry && name != gguf_types_entry &&
                !name.starts_with(gguf_prefix) && !header.find_tensor(name) &&
                repack::scales_suffix(value.str()).empty() && !invalid_utf8_at(value.str()) &&
                !meta.contains(name)) {
                add(name, value.str(), key);
                continue;
            }
        }
        bool replaced = false;
        add(std::string(gguf_prefix) + key, to_json_text(value, replaced), key);
        types[key] = type_label(value);
        if (replaced) ++replaced_keys;
    }
    if (replaced_keys > 0)
        context_.warn(std::to_string(replaced_keys) +
                      " metadata value(s) held bytes that are not UTF-8; JSON cannot store them, "
                      "so they were replaced by U+FFFD");
    if (!types.empty()) add(std::string(gguf_types_entry), types.dump(), "(types)");

    ordered_json json = ordered_json::object();
    json[std::string(metadata_key)] = std::move(meta);
    std::unordered_set<std::string_view> names;
    tensors_.clear();
    std::uint64_t offset = 0;
    for (const TensorInfo& t : header.tensors) {
        if (t.name == metadata_key)
            throw tensor_error("this name is reserved by safetensors", t.name);
        if (invalid_utf8_at(t.name))
            throw tensor_error("name is not UTF-8, which a safetensors header (JSON) cannot hold",
                               t.name);
        if (!names.insert(t.name).second) throw tensor_error("duplicate tensor name", t.name);
        const Dtype* dtype = dtype_for(t.type);
        if (!dtype)
            throw tensor_error(
                "type " + std::string(type_name(t.type)) +
                    " has no safetensors dtype (F64, F32, F16, BF16, I64, I32, I16, I8, "
                    "U8); repack[to=int8] or dequant it first",
                t.name);
        const auto bytes = tensor_bytes(t.type, t.ne);
        if (!bytes || *bytes != t.nbytes)
            throw tensor_error("byte size " + std::to_string(t.nbytes) + " does not match type " +
                                   std::string(type_name(t.type)) + " and shape " +
                                   t.shape_string(),
                               t.name);
        json[t.name] = {{"dtype", codes.count(t.name) ? "U8" : dtype->name},
                        {"shape", reversed(t.ne)},
                        {"data_offsets", {offset, offset + t.nbytes}}};
        tensors_.emplace_back(t.name, t.nbytes);
        offset += t.nbytes;
    }

    std::string text = json.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
    text.append((data_alignment - (8 + text.size()) % data_alignment) % data_alignment, ' ');
    if (text.size() > reference_header_limit)
        context_.warn("the safetensors header is " + std::to_string(text.size()) +
                      " bytes; Hugging Face's safetensors library refuses headers over " +
                      std::to_string(reference_header_limit));
    preamble_.assign(8, '\0');
    boost::endian::endian_store<std::uint64_t, 8, boost::endian::order::little>(
        reinterpret_cast<unsigned char*>(preamble_.data()), text.size());
    preamble_ += text;
    conventions::report_output_bytes(context_, path_, preamble_.size() + offset);
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
