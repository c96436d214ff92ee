#include "ck/safetensors/reader.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ck/conventions/repacked.hpp"
#include "ck/error.hpp"
#include "ck/safetensors/format.hpp"
#include "ck/safetensors/metadata_json.hpp"
#include "ck/support/byte_cursor.hpp"
#include "ck/support/mapped_tensors.hpp"
#include "ck/support/tensor_io.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace ck::safetensors {
using namespace ck;
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// One tensor of the header, as the JSON describes it.
struct Entry {
    std::string name;
    const Dtype* dtype = nullptr;
    std::string dtype_name;
    std::vector<std::int64_t> shape;  // PyTorch order
    std::uint64_t begin = 0, end = 0;
    std::size_t order = 0;  // position in the JSON
};

class HeaderChecker {
  public:
    HeaderChecker(std::string file, const std::byte* json, std::uint64_t json_size,
                  std::uint64_t data_size)
        : file_(std::move(file)),
          json_(reinterpret_cast<const char*>(json), json_size),
          data_size_(data_size) {}

    // Where the header first (or last) mentions `name`, for the error's byte offset.
    std::optional<std::uint64_t> offset_of(const std::string& name, bool last = false) const {
        const std::string quoted = "\"" + name + "\"";
        const auto at = last ? json_.rfind(quoted) : json_.find(quoted);
        if (at == std::string_view::npos) return std::nullopt;
        return 8 + at;
    }

    [[noreturn]] void fail_tensor(const std::string& name, const std::string& message) const {
        throw tensor_error(message, name, file_, offset_of(name));
    }

    ordered_json parse() const {
        // Duplicate keys: the JSON library would keep one silently, so watch every object.
        std::vector<std::unordered_set<std::string>> open_objects;
        std::string top_key;
        auto callback = [&](int depth, ordered_json::parse_event_t event, ordered_json& parsed) {
            using Event = ordered_json::parse_event_t;
            if (event == Event::object_start) open_objects.emplace_back();
            if (event == Event::object_end) open_objects.pop_back();
            if (event != Event::key || open_objects.empty()) return true;
            const std::string key = parsed.get<std::string>();
            if (depth == 1) top_key = key;
            if (open_objects.back().insert(key).second) return true;
            if (depth == 1 && key == metadata_key)
                throw Error("two __metadata__ objects", file_, offset_of(key), "header");
            if (depth == 1)
                throw tensor_error("duplicate tensor name", key, file_, offset_of(key, true));
            if (top_key == metadata_key)
                throw key_error("duplicate __metadata__ entry", key, file_, offset_of(key, true));
            throw tensor_error("duplicate field '" + key + "'", top_key, file_, offset_of(top_key));
        };
        try {
            ordered_json header = ordered_json::parse(json_.begin(), json_.end(), callback);
            if (!header.is_object())
                throw Error("the header is JSON but not an object", file_, 8, "header");
            return header;
        } catch (const ordered_json::parse_error& e) {
            throw Error(std::string("the header is not valid JSON: ") + e.what(), file_,
                        8 + (e.byte > 0 ? e.byte - 1 : 0), "header");
        } catch (const ordered_json::exception& e) {
            // Not only syntax errors: a number too large for a double ("1e999") is out_of_range,
            // and only ck::Error may leave a plugin.
            throw Error(std::string("the header is not valid JSON: ") + e.what(), file_, 8,
                        "header");
        }
    }

    Entry entry(const std::string& name, const ordered_json& v, std::size_t order) const {
        Entry e;
        e.name = name;
        e.order = order;
        if (!v.is_object()) fail_tensor(name, "entry is not an object");
        const auto dtype = v.find("dtype");
        const auto shape = v.find("shape");
        const auto offsets = v.find("data_offsets");
        if (dtype == v.end() || shape == v.end() || offsets == v.end())
            fail_tensor(name, "entry needs \"dtype\", \"shape\" and \"data_offsets\"");
        if (!dtype->is_string()) fail_tensor(name, "dtype is not a string");
        e.dtype_name = dtype->get<std::string>();
        e.dtype = find_dtype(e.dtype_name);
        if (!e.dtype)
            fail_tensor(name, is_foreign_dtype(e.dtype_name)
                                  ? "dtype " + e.dtype_name + " has no ggml equivalent"
                                  : "unknown dtype '" + e.dtype_name + "'");
        if (!shape->is_array()) fail_tensor(name, "shape is not an array");
        for (const auto& d : *shape) {
            if (!d.is_number_integer() || (!d.is_number_unsigned() && d.get<std::int64_t>() < 0) ||
                d.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
                fail_tensor(name, "shape " + shape->dump() +
                                      " has a dimension that is not a "
                                      "non-negative integer");
            e.shape.push_back(d.get<std::int64_t>());
        }
        if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
            !(*offsets)[1].is_number_unsigned())
            fail_tensor(name, "data_offsets must be [begin, end], two non-negative integers");
        e.begin = (*offsets)[0].get<std::uint64_t>();
        e.end = (*offsets)[1].get<std::uint64_t>();
        if (e.begin > e.end)
            fail_tensor(name, "data_offsets [" + std::to_string(e.begin) + ", " +
                                  std::to_string(e.end) + "] end before they begin");
        if (e.end > data_size_)
            fail_tensor(name, "data_offsets [" + std::to_string(e.begin) + ", " +
                                  std::to_string(e.end) + "] run past the end of the data (" +
                                  std::to_string(data_size_) + " bytes)");
        const auto elements = element_count(e.shape);
        const std::uint64_t size = e.dtype->size;
        if (!elements || *elements > UINT64_MAX / size)
            fail_tensor(name, "shape " + shape_text(e.shape) + ": size overflows");
        if (*elements * size != e.end - e.begin)
            fail_tensor(name, "dtype " + e.dtype_name + " and shape " + shape_text(e.shape) +
                                  " need " + std::to_string(*elements * size) +
                                  " bytes, data_offsets hold " + std::to_string(e.end - e.begin));
        return e;
    }

    // Sorts the entries into data order; refuses overlaps, reports gaps and trailing bytes.
    std::vector<std::string> check_layout(std::vector<Entry>& entries) const {
        std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
            return a.begin != b.begin ? a.begin < b.begin : a.order < b.order;
        });
        std::vector<std::string> unindexed;
        std::uint64_t covered = 0;
        const Entry* furthest = nullptr;
        for (const Entry& e : entries) {
            if (e.begin == e.end) continue;
            if (furthest && e.begin < covered)
                fail_tensor(e.name, "data_offsets [" + std::to_string(e.begin) + ", " +
                                        std::to_string(e.end) + "] overlap tensor '" +
                                        furthest->name + "' [" + std::to_string(furthest->begin) +
                                        ", " + std::to_string(furthest->end) + "]");
            if (e.begin > covered)
                unindexed.push_back(std::to_string(e.begin - covered) + " bytes before tensor '" +
                                    e.name + "' belong to no tensor");
            covered = e.end;
            furthest = &e;
        }
        if (covered < data_size_)
            unindexed.push_back(std::to_string(data_size_ - covered) +
                                " bytes after the last tensor belong to no tensor");
        return unindexed;
    }

  private:
    std::string file_;
    std::string_view json_;
    std::uint64_t data_size_;
};

// Repacked weights named in __metadata__ must be complete pairs of the right shapes.
void check_repacked(const ModelHeader& header, const std::vector<Entry>& entries,
                    const HeaderChecker& checker, const std::string& name,
                    const std::string& format) {
    const TensorInfo* codes = header.find_tensor(name);
    if (!codes)
        throw Error("__metadata__ says tensor '" + name + "' is " + format + ", but there is none",
                    header.source, checker.offset_of(name), key_subject(name));
    for (const Entry& e : entries)
        if (e.name == name && e.dtype_name != "U8")
            checker.fail_tensor(name, "a " + format + " tensor must be U8, not " + e.dtype_name);
    const std::string scales = name + std::string(repack::scales_suffix(format));
    if (auto problem = repack::check_pair(format, *codes, header.find_tensor(scales)))
        checker.fail_tensor(name, *problem);
}

// The header's top-level keys: one entry per tensor, in JSON order, and the __metadata__
// object (nullptr when there is none).
const ordered_json* read_entries(const ordered_json& json, const HeaderChecker& checker,
                                 const std::string& file, std::vector<Entry>& entries) {
    const ordered_json* meta = nullptr;
    for (const auto& [key, value] : json.items()) {
        if (key == metadata_key) {
            if (!value.is_object())
                throw Error("__metadata__ is not an object", file, checker.offset_of(key),
                            "header");
            meta = &value;
            continue;
        }
        entries.push_back(checker.entry(key, value, entries.size()));
    }
    return meta;
}

// The GGUF type names recorded in __metadata__ (an empty object when there are none).
ordered_json gguf_types(const ordered_json& meta, const HeaderChecker& checker,
                        const std::string& file) {
    ordered_json types = ordered_json::object();
    if (auto t = meta.find(gguf_types_entry); t != meta.end()) {
        types = ordered_json::parse(t->get<std::string>(), nullptr, false);
        if (!types.is_object())
            throw Error("not a JSON object of GGUF type names", file,
                        checker.offset_of(std::string(gguf_types_entry)),
                        key_subject(gguf_types_entry));
    }
    return types;
}

// The tensor directory in JSON order, with each tensor's absolute extent.
std::vector<TensorInfo> tensor_directory(const std::vector<Entry>& entries,
                                         std::uint64_t data_start,
                                         support::MappedTensors& extents) {
    std::vector<TensorInfo> tensors;
    for (const Entry& e : entries) {
        TensorInfo t;
        t.name = e.name;
        t.type = e.dtype->ggml_type;
        t.ne = reversed(e.shape);
        t.nbytes = e.end - e.begin;
        t.source_offset = data_start + e.begin;
        extents.add(t.source_offset, t.nbytes);
        tensors.push_back(std::move(t));
    }
    return tensors;
}

// __metadata__: GGUF keys with their recorded types, repacked pairs, anything else as string
// metadata under "safetensors.". Returns the names of the repacked tensors.
std::unordered_set<std::string> read_metadata(const ordered_json& meta,
                                              const std::vector<Entry>& entries,
                                              const HeaderChecker& checker, const std::string& file,
                                              ModelHeader& header) {
    for (const auto& [key, value] : meta.items())
        if (!value.is_string())
            throw Error("__metadata__ values must be strings; this one is " +
                            std::string(value.type_name()),
                        file, checker.offset_of(key), key_subject(key));
    const ordered_json types = gguf_types(meta, checker, file);
    std::unordered_set<std::string> repacked;
    for (const auto& [key, value] : meta.items()) {
        const std::string text = value.get<std::string>();
        const std::string subject = key_subject(key);
        std::string name;
        Value decoded;
        if (key == format_entry) {
            header.format_facts.emplace_back("format", text);
            continue;
        } else if (key == gguf_types_entry) {
            continue;
        } else if (key.starts_with(gguf_prefix)) {
            name = key.substr(gguf_prefix.size());
            const auto type = types.find(name);
            const std::string label =
                type != types.end() && type->is_string() ? type->get<std::string>() : "";
            try {
                decoded = from_json_text(text, label);
            } catch (const std::exception& e) {
                throw Error(std::string("cannot read this GGUF value: ") + e.what(), file,
                            checker.offset_of(key), subject);
            }
        } else if (!repack::scales_suffix(text).empty()) {
            check_repacked(header, entries, checker, key, text);
            repacked.insert(key);
            name = repack::metadata_key(key);
            decoded = Value::of_string(text);
        } else {
            name = std::string(foreign_prefix) + key;
            decoded = Value::of_string(text);
        }
        if (!header.metadata.insert(name, std::move(decoded)))
            throw Error("two __metadata__ entries give metadata key '" + name + "'", file,
                        checker.offset_of(key), subject);
    }
    return repacked;
}

// U8 tensors that are not repacked codes become i8, with a warning.
void warn_plain_u8(const std::vector<Entry>& entries,
                   const std::unordered_set<std::string>& repacked, Context& context,
                   const std::string& file) {
    std::size_t plain_u8 = 0;
    for (const Entry& e : entries)
        if (e.dtype_name == "U8" && !repacked.count(e.name)) ++plain_u8;
    if (plain_u8 > 0)
        context.warn(file + ": " + std::to_string(plain_u8) +
                     " U8 tensor(s) read as i8 (ggml has no unsigned 8-bit type; the bytes are "
                     "unchanged)");
}

}  // namespace

ModelHeader SafetensorsReader::open(const fs::path& path) {
    file_ = path.string();
    std::error_code ec;
    const auto file_size = fs::file_size(path, ec);
    if (ec) throw Error("cannot open: " + ec.message(), file_);
    if (file_size < 8)
        throw Error("file is " + std::to_string(file_size) +
                        " bytes; a safetensors file starts with an 8-byte header length",
                    file_, 0, "header length");
    const MappedFile& mapping = tensors_.open(file_);
    support::ByteCursor in(mapping.data(), mapping.size(), file_);
    const auto header_size = in.read<std::uint64_t>("the header length", "header length");
    if (header_size > file_size - 8)
        throw Error("header of " + std::to_string(header_size) +
                        " bytes is larger than the file (" + std::to_string(file_size - 8) +
                        " bytes follow the length)",
                    file_, 0, "header length");
    data_start_ = 8 + header_size;
    const std::uint64_t data_size = file_size - data_start_;
    HeaderChecker checker(file_, mapping.data() + 8, header_size, data_size);
    const ordered_json json = checker.parse();

    std::vector<Entry> entries;
    const ordered_json* meta = read_entries(json, checker, file_, entries);
    unindexed_ = checker.check_layout(entries);
    for (const std::string& problem : unindexed_) context_.warn(file_ + ": " + problem);

    ModelHeader header;
    header.source = file_;
    header.format = "safetensors";
    header.tensors = tensor_directory(entries, data_start_, tensors_);
    header.format_facts = {{"header bytes", std::to_string(header_size)},
                           {"data start", std::to_string(data_start_)},
                           {"file size", std::to_string(file_size)}};
    const std::unordered_set<std::string> repacked =
        meta ? read_metadata(*meta, entries, checker, file_, header)
             : std::unordered_set<std::string>{};
    warn_plain_u8(entries, repacked, context_, file_);
    row_bytes_.clear();
    for (const TensorInfo& t : header.tensors) row_bytes_.push_back(t.row_bytes());
    return header;
}

TensorView SafetensorsReader::tensor(std::size_t index) {
    return tensors_.view(index);
}

TensorView SafetensorsReader::tensor_rows(std::size_t index, RowRange rows) {
    const std::uint64_t row_bytes = row_bytes_.at(index);
    return tensors_.view(index).slice(rows.first * row_bytes, rows.count * row_bytes);
}

void SafetensorsReader::verify() {
    if (!unindexed_.empty()) throw Error(unindexed_.front(), file_, data_start_, "data");
}

bool looks_like_safetensors(const unsigned char* head, std::size_t size, const char*) {
    // A length, then '{' and what can follow it. A GGUF file whose n_tensors byte happens to be
    // '{' is told apart by its magic and by the next byte. The length is not compared with the
    // file's size here: a header longer than the file is the reader's to explain.
    if (size < 10 || std::memcmp(head, "GGUF", 4) == 0 || head[8] != '{') return false;
    const unsigned char next = head[9];
    return next == '"' || next == '}' || next == ' ' || next == '\n' || next == '\r' ||
           next == '\t';
}

}  // namespace ck::safetensors
