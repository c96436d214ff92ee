#include "inspect/inspect_text.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <ostream>
#include <unordered_map>

#include "ck/conventions/repacked.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "pipeline/progress.hpp"

namespace ckhost {
namespace {

// Values longer than this are cut, as gguf-dump cuts them (a 4 KB chat template on one line
// hides every key after it); --kv shows them whole.
constexpr std::size_t value_width = 80;
// Keys and names this long still align; a longer one pushes only its own line.
constexpr std::size_t max_column = 48;
// Items shown of an array, as before issue 16 (gguf-dump shows 6).
constexpr std::uint64_t max_items = 8;

// Display width of UTF-8 text: one column per code point (continuation bytes add nothing).
std::size_t width_of(std::string_view s) {
    return static_cast<std::size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(std::string_view s, std::size_t width) {
    std::string out(s);
    const std::size_t w = width_of(s);
    if (w < width) out.append(width - w, ' ');
    return out;
}

std::string pad_left(std::string_view s, std::size_t width) {
    const std::size_t w = width_of(s);
    return std::string(w < width ? width - w : 0, ' ') + std::string(s);
}

// The longest prefix of `s` of at most `bytes` bytes that does not end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t bytes) {
    if (bytes >= s.size()) return s;
    while (bytes > 0 && (static_cast<unsigned char>(s[bytes]) & 0xC0) == 0x80) --bytes;
    return s.substr(0, bytes);
}

std::string quoted(std::string_view s) {
    return ck::Value::of_string(std::string(s)).to_display();
}

// A string value, cut to the value column with a marker that says how to see all of it.
std::string string_text(std::string_view s, const std::string& key) {
    std::string whole = quoted(s);
    if (whole.size() <= value_width) return whole;
    // Escapes make the quoted text longer than the raw bytes: shrink until it fits.
    std::size_t take = value_width;
    std::string shown;
    do {
        shown = quoted(utf8_prefix(s, take));
        take -= std::min(take, shown.size() > value_width ? shown.size() - value_width : 1);
    } while (shown.size() > value_width && take > 0);
    return shown + "... (" + with_thousands(s.size()) + " bytes; --kv " + key + " shows all of it)";
}

// An array: its count, then the first items, as many as fit in the value column (at most 8).
std::string array_text(const ck::ArrayValue& a) {
    std::string out = with_thousands(a.size()) + (a.size() == 1 ? " item" : " items");
    if (a.size() == 0) return out;
    std::string items;
    std::uint64_t shown = 0;
    const auto add = [&](const std::string& item) {
        // Always one item, however long (cut like a string), then only what fits.
        if (shown == max_items || (shown > 0 && items.size() + item.size() + 2 > value_width))
            return false;
        if (shown++ > 0) items += ", ";
        items +=
            item.size() > value_width ? std::string(utf8_prefix(item, value_width)) + "..." : item;
        return true;
    };
    if (a.element_type() == ck::ValueType::string)
        a.for_each_string([&](std::string_view s) { return add(quoted(s)); });
    else
        for (std::uint64_t i = 0; i < a.size(); ++i)
            if (!add(ck::Value::scalar(a.element_type(), a.raw_at(i)).to_display())) break;
    return out + " [" + items + (shown < a.size() ? ", ...]" : "]");
}

std::string type_text(const ck::Value& v) {
    if (v.type() != ck::ValueType::array) return std::string(ck::value_type_name(v.type()));
    return "arr[" + std::string(ck::value_type_name(v.array().element_type())) + "]";
}

std::string value_text(const std::string& key, const ck::Value& v) {
    if (v.type() == ck::ValueType::string) return string_text(v.str(), key);
    if (v.type() == ck::ValueType::array) return array_text(v.array());
    return v.to_display();
}

std::string shape_text(const ck::TensorInfo& t, bool outermost_first) {
    std::string out = "[";
    for (std::size_t i = 0; i < t.ne.size(); ++i) {
        const std::int64_t d = outermost_first ? t.ne[t.ne.size() - 1 - i] : t.ne[i];
        out += (i ? ", " : "") + std::to_string(d);
    }
    return out + "]";
}

// "nf4-absmax-64" -> "nf4".
std::string short_format(std::string_view format) {
    return std::string(format.substr(0, format.find('-')));
}

std::uint64_t tensor_elements(const ck::TensorInfo& t, const RepackRole& role) {
    if (role.is_codes && role.format == "nf4") return 2 * t.elements();
    return t.elements();
}

// What the file holds: a tensor converted on read under its stored type (GGUF-lite's
// Q4_per_group_64), repacked codes under their format.
std::string tensor_type(const ck::TensorInfo& t, const RepackRole& role) {
    if (!t.stored_type.empty()) return t.stored_type;
    return role.is_codes ? role.format : std::string(ck::type_name(t.type));
}

std::uint64_t stored_size(const ck::TensorInfo& t) {
    return t.stored_type.empty() ? t.nbytes : t.stored_bytes;
}

// The last column: what a repacked tensor holds, or what a converted one is read as.
std::string tensor_note(const ck::TensorInfo& t, const RepackRole& role) {
    if (!t.stored_type.empty())
        return std::string(ck::type_name(t.type)) + ", " + std::to_string(t.nbytes) + " bytes";
    if (role.format.empty()) return {};
    if (role.is_codes)
        return role.format == "nf4" ? "NF4 codes, two 4-bit values a byte; scales " + role.partner
                                    : "Int8 codes, one byte a value; min/max " + role.partner;
    return (role.format == "nf4" ? "NF4 absmax per 64 values of " : "Int8 min, max per 128 of ") +
           role.partner;
}

struct Row {
    std::vector<std::string> cells;
    std::string below;  // a line of its own under the row (what is wrong with the value)
};

// Columns padded to their widest cell (capped), numbers right-aligned.
void print_table(const std::vector<std::string>& header, const std::vector<bool>& right,
                 const std::vector<Row>& rows, std::ostream& out) {
    std::vector<std::size_t> width(header.size());
    for (std::size_t c = 0; c < header.size(); ++c) width[c] = width_of(header[c]);
    for (const Row& r : rows)
        for (std::size_t c = 0; c < r.cells.size(); ++c)
            width[c] = std::max(width[c], std::min(max_column, width_of(r.cells[c])));
    const auto line = [&](const std::vector<std::string>& cells) {
        std::string text = " ";
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const bool last = c + 1 == cells.size();
            text += ' ';
            text += right[c] ? pad_left(cells[c], width[c])
                    : last   ? cells[c]
                             : pad(cells[c], width[c]);
            if (!last) text += ' ';
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out << text << "\n";
    };
    line(header);
    for (const Row& r : rows) {
        line(r.cells);
        if (!r.below.empty()) out << "    " << r.below << "\n";
    }
}

}  // namespace

std::string with_thousands(std::uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

bool converts_on_read(const ck::ModelHeader& h) {
    return std::any_of(h.tensors.begin(), h.tensors.end(),
                       [](const ck::TensorInfo& t) { return !t.stored_type.empty(); });
}

std::uint64_t stored_tensor_bytes(const ck::ModelHeader& h) {
    std::uint64_t total = 0;
    for (const ck::TensorInfo& t : h.tensors) total += stored_size(t);
    return total;
}

bool shapes_outermost_first(std::string_view format) {
    return format == "safetensors" || format == "gguflite";
}

std::vector<RepackRole> repack_roles(const ck::ModelHeader& h) {
    std::vector<RepackRole> roles(h.tensors.size());
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < h.tensors.size(); ++i) index.emplace(h.tensors[i].name, i);
    for (const auto& [key, value] : h.metadata) {
        if (!key.starts_with(ck::repack::metadata_prefix) || value.type() != ck::ValueType::string)
            continue;
        const std::string name = key.substr(ck::repack::metadata_prefix.size());
        const std::string suffix(ck::repack::scales_suffix(value.str()));
        const auto codes = index.find(name);
        if (suffix.empty() || codes == index.end()) continue;
        roles[codes->second] = {short_format(value.str()), true, name + suffix};
        if (const auto scales = index.find(name + suffix); scales != index.end())
            roles[scales->second] = {short_format(value.str()), false, name};
    }
    return roles;
}

std::uint64_t parameter_count(const ck::ModelHeader& h) {
    const std::vector<RepackRole> roles = repack_roles(h);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < h.tensors.size(); ++i)
        if (roles[i].format.empty() || roles[i].is_codes)
            total += tensor_elements(h.tensors[i], roles[i]);
    return total;
}

void print_full_value(const ck::Value& v, std::ostream& out) {
    if (v.type() == ck::ValueType::string) {
        out << v.str() << "\n";
        return;
    }
    if (v.type() != ck::ValueType::array) {
        out << v.to_display() << "\n";
        return;
    }
    // One element per line, all of them; strings quoted, since they may hold newlines.
    const ck::ArrayValue& a = v.array();
    if (a.element_type() == ck::ValueType::string) {
        a.for_each_string([&](std::string_view s) {
            out << quoted(s) << "\n";
            return true;
        });
    } else {
        for (std::uint64_t i = 0; i < a.size(); ++i)
            out << ck::Value::scalar(a.element_type(), a.raw_at(i)).to_display() << "\n";
    }
}

namespace {

// After a reader's failure the counts are of what it read, not of what the file holds.
std::string read_before(const TextInspectOptions& options) {
    return options.partial ? " read before the error" : "";
}

void print_metadata_table(const ck::ModelHeader& h, const TextInspectOptions& options,
                          std::ostream& out) {
    out << "metadata: " << h.metadata.size() << (h.metadata.size() == 1 ? " key" : " keys")
        << read_before(options) << "\n";
    if (h.metadata.size() == 0) return;
    std::vector<Row> rows;
    for (const auto& [k, v] : h.metadata) {
        const bool is_file_type = k == ck::llama::file_type_key;
        std::string value = is_file_type && !options.file_type_label.empty()
                                ? options.file_type_label
                                : value_text(k, v);
        rows.push_back({{k, type_text(v), value}, is_file_type ? options.file_type_problem : ""});
    }
    print_table({"key", "type", "value"}, {false, false, false}, rows, out);
}

// The tensor count, parameters and bytes, and a table of them per type as the file stores them
// (repacked codes under their format, not as i8; GGUF-lite's Q4 as Q4, not as the F32 read).
void print_tensor_summary(const ck::ModelHeader& h, const std::vector<RepackRole>& roles,
                          const TextInspectOptions& options, std::ostream& out) {
    std::map<std::string, std::array<std::uint64_t, 3>> by_type;  // tensors, elements, bytes
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        auto& [count, elements, bytes] = by_type[tensor_type(h.tensors[i], roles[i])];
        ++count;
        elements += tensor_elements(h.tensors[i], roles[i]);
        bytes += stored_size(h.tensors[i]);
    }
    const std::uint64_t parameters = parameter_count(h);
    // "19,532,032 parameters (19.53 M)": the short form only where it says something more.
    out << "tensors: " << h.tensors.size() << read_before(options) << ", "
        << with_thousands(parameters) << " parameters"
        << (parameters >= 1000 ? " (" + human_count(parameters) + ")" : "") << ", "
        << human_bytes(stored_tensor_bytes(h))
        << (converts_on_read(h) ? " stored, " + human_bytes(h.total_bytes()) + " as read" : "")
        << "\n";
    if (by_type.empty()) return;
    std::vector<Row> rows;
    for (const auto& [type, v] : by_type)
        rows.push_back({{type, std::to_string(v[0]), with_thousands(v[1]), human_bytes(v[2])}, {}});
    print_table({"type", "tensors", "elements", "bytes"}, {false, true, true, true}, rows, out);
}

void print_tensor_table(const ck::ModelHeader& h, const std::vector<RepackRole>& roles,
                        const TextInspectOptions& options, std::ostream& out) {
    const bool outer_first = shapes_outermost_first(options.format);
    out << "tensor table (shape "
        << (outer_first ? "as the file states it, outermost first"
                        : "in ggml's ne order, innermost first")
        << "; offset: where the data starts in the file):\n";
    bool any_note = false, any_role = false;
    std::vector<Row> rows;
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        const ck::TensorInfo& t = h.tensors[i];
        const std::string note = tensor_note(t, roles[i]);
        any_note = any_note || !note.empty();
        any_role = any_role || !roles[i].format.empty();
        // A reader that failed may not have got to a tensor's place in the file.
        const bool placed = !options.partial || t.source_offset != 0;
        rows.push_back(
            {{t.name, tensor_type(t, roles[i]), shape_text(t, outer_first),
              with_thousands(tensor_elements(t, roles[i])), std::to_string(stored_size(t)),
              placed ? std::to_string(t.source_offset) : "-", note},
             {}});
    }
    std::vector<std::string> header = {"name", "type", "shape", "elements", "bytes", "offset"};
    std::vector<bool> right = {false, false, false, true, true, true};
    if (any_note) {
        header.push_back(any_role ? "holds" : "read as");
        right.push_back(false);
    } else {
        for (Row& r : rows) r.cells.pop_back();
    }
    print_table(header, right, rows, out);
}

}  // namespace

void print_inspect_text(const ck::ModelHeader& h, const TextInspectOptions& options,
                        std::ostream& out) {
    out << options.file << ": " << options.format
        << (options.partial ? " (damaged: what could be read before the error)" : "") << "\n";
    for (const auto& [k, v] : h.format_facts) out << "  " << k << ": " << v << "\n";
    print_metadata_table(h, options, out);
    const std::vector<RepackRole> roles = repack_roles(h);
    print_tensor_summary(h, roles, options, out);
    if (!options.file_type_missing.empty()) out << "  " << options.file_type_missing << "\n";
    if (options.tensors) print_tensor_table(h, roles, options, out);
}

}  // namespace ckhost
