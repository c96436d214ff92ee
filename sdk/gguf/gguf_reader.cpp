#include "gguf_reader.hpp"

#include <boost/endian/conversion.hpp>

#include <cstring>
#include <string_view>
#include <unordered_set>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/byte_cursor.hpp"
#include "ck/support/mapped_tensors.hpp"
#include "gguf_endian.hpp"
#include "gguf_format.hpp"
#include "gguf_split_set.hpp"

namespace fs = std::filesystem;

namespace ckplugin::gguf {
using namespace ck;

namespace {

using support::ByteCursor;

// Why the string at the cursor cannot be read (its length field is cut short, too large, or
// longer than what remains). Out of line and cold, so that read_string stays small.
[[noreturn, gnu::cold, gnu::noinline]] void fail_string(ByteCursor& in, std::string_view what,
                                                        std::string_view subject,
                                                        std::uint64_t limit) {
    std::uint64_t at = in.pos();
    if (in.remaining() < 8)
        in.fail("file ends inside the " + std::string(what) + " length (needs 8 bytes, " +
                    std::to_string(in.remaining()) + " remain)",
                at, std::string(subject));
    auto len = in.read<std::uint64_t>({}, {});
    if (len > limit)
        in.fail(std::string(what) + " length " + std::to_string(len) + " exceeds the maximum of " +
                    std::to_string(limit),
                at, std::string(subject));
    in.fail(std::string(what) + " length " + std::to_string(len) +
                " runs past the end of the file (" + std::to_string(in.remaining()) +
                " bytes remain)",
            at, std::string(subject));
}

// A GGUF string: a u64 length, at most `limit`, then that many bytes (not NUL-terminated). The
// view points into the mapping. `what` and `subject` become strings only on failure: the hot
// loop over 150k tokenizer strings must not allocate.
std::string_view read_string(ByteCursor& in, std::string_view what, std::string_view subject,
                             std::uint64_t limit = max_string_bytes) {
    if (in.remaining() >= 8) {
        const auto len = in.peek<std::uint64_t>({}, {});
        if (len <= limit && len <= in.remaining() - 8) {
            in.skip(8, {}, {});
            return in.chars(len, {}, {});
        }
    }
    fail_string(in, what, subject, limit);
}

void check_magic(ByteCursor& in, std::uint64_t file_size) {
    const char* head = reinterpret_cast<const char*>(in.here());
    constexpr std::string_view lfs = "version https://git-lfs";
    if (file_size >= lfs.size() && std::string_view(head, lfs.size()) == lfs)
        in.fail("this is a Git LFS pointer, not a model: fetch the real file with 'git lfs pull'",
                0, "magic");
    if (file_size < magic.size()) in.fail("file too short to hold the GGUF magic", 0, "magic");
    if (std::string_view(head, magic.size()) != magic) {
        std::string shown;
        for (std::size_t i = 0; i < 4; ++i) {
            auto c = static_cast<unsigned char>(head[i]);
            char buf[8];
            std::snprintf(buf, sizeof buf, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
            shown += buf;
        }
        in.fail("bad magic '" + shown + "', expected 'GGUF': not a GGUF file", 0, "magic");
    }
    in.skip(magic.size(), "the magic", "magic");
}

std::uint32_t check_version(ByteCursor& in) {
    std::uint64_t at = in.pos();
    auto version = in.read<std::uint32_t>("the version", "version");
    // gguf-py's rule: versions are small, so a version whose low 16 bits read as zero was
    // written big-endian (for s390x, or by gguf_convert_endian.py). Every later field is then
    // read in that order.
    if (version != 0 && (version & 0xffff) == 0) {
        in.set_byte_order(ByteOrder::big);
        version = boost::endian::endian_reverse(version);
    }
    if (version == 1)
        in.fail(
            "GGUF version 1 is not supported (it used 32-bit counts; re-save the model "
            "with a current llama.cpp)",
            at, "version");
    if (version < min_version || version > max_version)
        in.fail("unsupported GGUF version " + std::to_string(version) + ", expected 2 or 3", at,
                "version");
    return version;
}

// Smallest encodings, used to bound counts by the bytes that remain.
constexpr std::uint64_t min_kv_bytes = 8 + 1 + 4 + 1;           // key len, 1-byte key, type, u8
constexpr std::uint64_t min_tensor_info_bytes = 8 + 4 + 4 + 8;  // name len, n_dims, type, offset

std::uint64_t read_count(ByteCursor& in, const char* field, const char* what,
                         std::uint64_t min_bytes_each) {
    std::uint64_t at = in.pos();
    auto count = in.read<std::uint64_t>(std::string("the ") + what + " count", field);
    std::uint64_t room = in.remaining() / min_bytes_each;
    if (count > room)
        in.fail(std::string(what) + " count " + std::to_string(count) +
                    " cannot fit in the file: at most " + std::to_string(room) +
                    " would fit in the " + std::to_string(in.remaining()) +
                    " remaining bytes (corrupt count or truncated file)",
                at, field);
    return count;
}

ValueType read_value_type(ByteCursor& in, const std::string& subject, bool element) {
    std::uint64_t at = in.pos();
    auto raw =
        in.read<std::uint32_t>(element ? "the array element type" : "the value type", subject);
    if (!is_valid_value_type(raw))
        in.fail(std::string(element ? "invalid array element type " : "invalid value type ") +
                    std::to_string(static_cast<std::int32_t>(raw)) + " (valid: 0 to 12)",
                at, subject);
    auto type = static_cast<ValueType>(raw);
    if (element && type == ValueType::array)
        in.fail("array of arrays is not supported (nor by ggml)", at, subject);
    return type;
}

Value read_array(ByteCursor& in, const std::string& subject,
                 const std::shared_ptr<const MappedFile>& owner) {
    ValueType elem = read_value_type(in, subject, true);
    std::uint64_t at = in.pos();
    auto count = in.read<std::uint64_t>("the array count", subject);
    std::uint64_t min_each = elem == ValueType::string ? 8 : value_type_size(elem);
    if (count > max_array_count)
        in.fail("array count " + std::to_string(count) + " exceeds the maximum of " +
                    std::to_string(max_array_count),
                at, subject);
    if (!in.fits(count, min_each))
        in.fail("array of " + std::to_string(count) + " " + std::string(value_type_name(elem)) +
                    " runs past the end of the file (" + std::to_string(in.remaining()) +
                    " bytes remain)",
                at, subject);
    const std::byte* start = in.here();
    std::uint64_t begin = in.pos();
    if (elem == ValueType::string) {
        // Walk the lengths only: the strings stay in the mapping.
        for (std::uint64_t i = 0; i < count; ++i) read_string(in, "a string element", subject);
    } else {
        in.skip(count * min_each, "the array", subject);
    }
    std::span<const std::byte> bytes(start, in.pos() - begin);
    ArrayValue array(elem, count, bytes, owner);
    if (in.byte_order() == ByteOrder::big) array = little_endian_array(array);
    return Value::of_array(std::move(array));
}

Value read_value(ByteCursor& in, ValueType type, const std::string& subject,
                 const std::shared_ptr<const MappedFile>& owner, Context& context,
                 const std::string& file) {
    switch (type) {
        case ValueType::string:
            return Value::of_string(std::string(read_string(in, "string value", subject)));
        case ValueType::array:
            return read_array(in, subject, owner);
        case ValueType::u8:
        case ValueType::i8:
        case ValueType::boolean: {
            std::uint64_t at = in.pos();
            auto v = in.read<std::uint8_t>("the value", subject);
            if (type == ValueType::boolean && v > 1)
                context.warn(file + ": byte " + std::to_string(at) + ": " + subject +
                             ": bool byte " + std::to_string(v) + " read as true");
            return Value::scalar(type, type == ValueType::boolean ? (v != 0) : v);
        }
        case ValueType::u16:
        case ValueType::i16:
            return Value::scalar(type, in.read<std::uint16_t>("the value", subject));
        case ValueType::u32:
        case ValueType::i32:
        case ValueType::f32:
            return Value::scalar(type, in.read<std::uint32_t>("the value", subject));
        default:
            return Value::scalar(type, in.read<std::uint64_t>("the value", subject));
    }
}

std::uint64_t alignment_of(const Metadata& meta, ByteCursor& in, std::uint64_t key_pos) {
    const Value* v = meta.find(alignment_key);
    if (!v) return default_alignment;
    std::string subject = key_subject(alignment_key);
    if (v->type() != ValueType::u32)
        in.fail("must be of type u32 but is " + std::string(value_type_name(v->type())), key_pos,
                subject);
    if (!is_power_of_two(v->raw()))
        in.fail("alignment " + std::to_string(v->raw()) + " is not a power of two", key_pos,
                subject);
    return v->raw();
}

// The key-value section: each key once, each value checked by its type (arrays stay in the
// mapping, `owner`). Returns where the alignment key starts (0 when absent), for its errors.
std::uint64_t read_metadata(ByteCursor& in, std::uint64_t n_kv, Metadata& metadata,
                            const std::shared_ptr<const MappedFile>& owner, Context& context) {
    std::uint64_t alignment_key_pos = 0;
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        std::uint64_t key_pos = in.pos();
        std::string index_subject = "key-value " + std::to_string(i);
        std::string_view key = read_string(in, "key", index_subject);
        if (key.empty()) in.fail("key " + std::to_string(i) + " is empty", key_pos, index_subject);
        std::string subject = key_subject(key);
        ValueType type = read_value_type(in, subject, false);
        Value value = read_value(in, type, subject, owner, context, in.file());
        if (key == alignment_key) alignment_key_pos = key_pos;
        if (!metadata.insert(std::string(key), std::move(value)))
            in.fail("duplicate key", key_pos, subject);
    }
    return alignment_key_pos;
}

// A tensor's offset as the file gives it (from the data section) and where it was read.
struct OffsetField {
    std::uint64_t value = 0;
    std::uint64_t at = 0;
};

// The dimensions of tensor info `t`: at most four, none negative, their product an int64.
void read_shape(ByteCursor& in, TensorInfo& t, const std::string& subject) {
    std::uint64_t dims_pos = in.pos();
    auto n_dims = in.read<std::uint32_t>("the number of dimensions", subject);
    if (n_dims > max_dims)
        in.fail("invalid number of dimensions " + std::to_string(n_dims) + " (at most 4)", dims_pos,
                subject);
    for (std::uint32_t d = 0; d < n_dims; ++d) {
        std::uint64_t at = in.pos();
        auto ne = in.read<std::int64_t>("a dimension", subject);
        if (ne < 0)
            in.fail("dimension " + std::to_string(d) + " is " + std::to_string(ne) + " (negative)",
                    at, subject);
        t.ne.push_back(ne);
    }
    if (!element_count(t.ne))
        in.fail("shape " + t.shape_string() + ": element count overflows int64", dims_pos, subject);
}

// The ggml type of tensor info `t`, which must be known, still readable, and fit its shape;
// sets the size in bytes. Shape errors point at `dims_pos`.
void read_tensor_type(ByteCursor& in, TensorInfo& t, std::uint64_t dims_pos,
                      const std::string& subject) {
    std::uint64_t type_pos = in.pos();
    t.type = in.read<std::uint32_t>("the tensor type", subject);
    const TypeInfo* info = find_type(t.type);
    if (!info)
        in.fail("invalid ggml type " + std::to_string(static_cast<std::int32_t>(t.type)) +
                    " (unknown; known ids are 0 to " + std::to_string(ggml_type_count - 1) + ")",
                type_pos, subject);
    if (info->removed)
        in.fail("ggml type " + std::to_string(t.type) + " was removed from ggml and cannot be read",
                type_pos, subject);
    if (in.byte_order() == ByteOrder::big && !find_swap_rule(t.type))
        in.fail(swap_refusal(t.type), type_pos, subject);
    std::uint64_t ne0 = t.ne.empty() ? 1 : static_cast<std::uint64_t>(t.ne[0]);
    if (ne0 % info->block_size != 0)
        in.fail("type " + std::string(info->name) + " has " + std::to_string(ne0) +
                    " elements per row, not a multiple of its block size " +
                    std::to_string(info->block_size),
                dims_pos, subject);
    auto nbytes = tensor_bytes(t.type, t.ne);
    if (!nbytes)
        in.fail("shape " + t.shape_string() + " of type " + std::string(info->name) +
                    ": size in bytes overflows",
                dims_pos, subject);
    t.nbytes = *nbytes;
}

// The tensor infos: name (unique, not too long), shape, type, and the offset, which is only
// recorded here; place_tensors checks it against the others.
std::vector<OffsetField> read_tensor_infos(ByteCursor& in, std::uint64_t n_tensors,
                                           std::vector<TensorInfo>& tensors) {
    std::unordered_set<std::string_view> names;
    std::vector<OffsetField> offsets(n_tensors);
    tensors.reserve(n_tensors);
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        const std::uint64_t info_pos = in.pos();
        std::string index_subject = "tensor " + std::to_string(i);
        std::string_view name = read_string(in, "tensor name", index_subject);
        std::string subject = tensor_subject(i, name);
        if (name.size() > max_name_bytes)
            in.fail("name is " + std::to_string(name.size()) + " bytes, at most " +
                        std::to_string(max_name_bytes) + " allowed",
                    info_pos, subject);
        if (!names.insert(name).second) in.fail("duplicate tensor name", info_pos, subject);

        TensorInfo t;
        t.name = std::string(name);
        const std::uint64_t dims_pos = in.pos();
        read_shape(in, t, subject);
        read_tensor_type(in, t, dims_pos, subject);
        offsets[i].at = in.pos();
        offsets[i].value = in.read<std::uint64_t>("the tensor offset", subject);
        tensors.push_back(std::move(t));
    }
    return offsets;
}

// The data section starts at the next multiple of the alignment. The padding must exist when
// there are tensors (ggml seeks to it).
std::uint64_t data_section_start(const ByteCursor& in, std::uint64_t alignment,
                                 std::uint64_t n_tensors, std::uint64_t file_size) {
    const std::uint64_t data_start = align_up(in.pos(), alignment);
    if (n_tensors > 0 && data_start > file_size)
        in.fail("file ends inside the padding before the data section (data would start at " +
                    std::to_string(data_start) + ", file has " + std::to_string(file_size) +
                    " bytes)",
                in.pos(), "padding");
    return data_start;
}

// Offsets: aligned, packed in order (ggml requires it, so nothing else reads gaps), and inside
// the file. The packed rule also rules out every overlap. Sets each tensor's source offset,
// appends its extent, and returns the bytes the tensors take with their padding.
std::uint64_t place_tensors(const ByteCursor& in, std::vector<TensorInfo>& tensors,
                            const std::vector<OffsetField>& offsets, std::uint64_t alignment,
                            std::uint64_t data_start, std::uint64_t file_size,
                            support::MappedTensors& extents) {
    std::uint64_t expected = 0;
    for (std::uint64_t i = 0; i < tensors.size(); ++i) {
        TensorInfo& t = tensors[i];
        std::string subject = tensor_subject(i, t.name);
        const std::uint64_t off = offsets[i].value;
        if (off % alignment != 0)
            in.fail("offset " + std::to_string(off) + " is not a multiple of the alignment " +
                        std::to_string(alignment),
                    offsets[i].at, subject);
        if (off != expected)
            in.fail("offset " + std::to_string(off) + ", expected " + std::to_string(expected) +
                        (off < expected ? " (overlaps the previous tensor)"
                                        : " (gap after the previous tensor)") +
                        ": tensors must be packed in order",
                    offsets[i].at, subject);
        std::uint64_t start = data_start + off;
        if (t.nbytes > file_size || start > file_size - t.nbytes)
            in.fail("tensor data (" + std::to_string(t.nbytes) + " bytes at offset " +
                        std::to_string(start) + ") runs past the end of the file (" +
                        std::to_string(file_size) + " bytes)",
                    offsets[i].at, subject);
        t.source_offset = start;
        extents.add(start, t.nbytes);
        expected = off + align_up(t.nbytes, alignment);
    }
    return expected;
}

}  // namespace

bool looks_like_gguf(const unsigned char* head, std::size_t size, const char*) {
    return size >= 4 && std::memcmp(head, magic.data(), 4) == 0;
}

namespace {

// What parse_gguf_file has read of a file so far: the facts of a file it finishes, and of one
// it cannot (with the counts its header promised), for Reader::read_before_failure.
struct ParseProgress {
    std::uint64_t file_size = 0;
    std::optional<std::uint32_t> version;
    std::optional<std::uint64_t> n_tensors, n_kv, alignment, data_start;
    ByteOrder order = ByteOrder::little;

    std::vector<std::pair<std::string, std::string>> facts(bool finished) const {
        std::vector<std::pair<std::string, std::string>> out;
        const auto add = [&](const char* name, const std::optional<std::uint64_t>& v) {
            if (v) out.emplace_back(name, std::to_string(*v));
        };
        add("version", version);
        add("alignment", alignment);
        add("data start", data_start);
        out.emplace_back("file size", std::to_string(file_size));
        if (version) out.emplace_back("byte order", byte_order_name(order));
        if (finished) return out;
        add("tensor count", n_tensors);
        add("key-value count", n_kv);
        return out;
    }
};

}  // namespace

// Header facts, version, offsets: one GGUF file read and checked on its own, with nothing of
// any split set it may belong to. When it fails, `read_before_failure` (if given) gets what it
// read: the facts so far, the keys and tensor infos before the problem.
ParsedGguf parse_gguf_file(const fs::path& path, Context& context,
                           ModelHeader* read_before_failure) {
    const std::string file = path.string();
    std::error_code ec;
    auto file_size = fs::file_size(path, ec);
    if (ec) throw Error("cannot open: " + ec.message(), file);
    if (file_size == 0) throw Error("empty file (0 bytes): not a GGUF model", file, 0, "magic");

    ParsedGguf parsed;
    parsed.file_size = file_size;
    ModelHeader& header = parsed.header;
    header.source = file;
    header.format = "gguf";
    ParseProgress progress;
    progress.file_size = file_size;
    std::uint64_t data_bytes = 0;
    const MappedFile& mapping = parsed.tensors.open(path);
    ByteCursor in(mapping.data(), mapping.size(), file);
    try {
        check_magic(in, file_size);
        progress.version = check_version(in);
        progress.order = in.byte_order();
        progress.n_tensors = read_count(in, "n_tensors", "tensor", min_tensor_info_bytes);
        progress.n_kv = read_count(in, "n_kv", "key-value", min_kv_bytes);
        const std::uint64_t alignment_key_pos = read_metadata(
            in, *progress.n_kv, header.metadata, parsed.tensors.shared_file(), context);
        progress.alignment = alignment_of(header.metadata, in, alignment_key_pos);

        const std::vector<OffsetField> offsets =
            read_tensor_infos(in, *progress.n_tensors, header.tensors);
        progress.data_start = parsed.data_start =
            data_section_start(in, *progress.alignment, *progress.n_tensors, file_size);
        data_bytes = place_tensors(in, header.tensors, offsets, *progress.alignment,
                                   parsed.data_start, file_size, parsed.tensors);
    } catch (const Error&) {
        if (read_before_failure) {
            *read_before_failure = std::move(header);
            read_before_failure->format_facts = progress.facts(false);
        }
        throw;
    }

    header.format_facts = progress.facts(true);
    parsed.big_endian = in.byte_order() == ByteOrder::big;
    if (file_size > parsed.data_start + data_bytes && !header.tensors.empty()) {
        const std::uint64_t extra = file_size - parsed.data_start - data_bytes;
        header.format_facts.emplace_back("trailing bytes", std::to_string(extra));
        // ggml ignores them; they are no part of the model, and a copy drops them.
        parsed.trailing.emplace(
            std::to_string(extra) + " bytes after the last tensor belong to no tensor", file,
            parsed.data_start + data_bytes, "data");
        context.warn(file + ": " + parsed.trailing->message());
    }
    return parsed;
}

ModelHeader GgufReader::open(const fs::path& path) {
    read_before_failure_ = {};
    ParsedGguf given = parse_gguf_file(path, context_, &read_before_failure_);
    const std::optional<SplitKeys> keys = split_keys(given.header.metadata, path.string());
    shards_.clear();
    locations_.clear();
    trailing_.clear();
    if (!keys || keys->count == 1) {
        data_start_ = given.data_start;
        if (given.trailing) trailing_.push_back(*given.trailing);
        ModelHeader header = std::move(given.header);
        for (std::size_t i = 0; i < header.tensors.size(); ++i)
            locations_.push_back(
                {0, i, header.tensors[i].type, header.tensors[i].row_bytes(), given.big_endian});
        shards_.push_back(std::move(given.tensors));
        return header;
    }
    std::vector<ParsedGguf> set = open_split_set(std::move(given), path, *keys, context_);
    data_start_ = set.front().data_start;
    for (std::size_t s = 0; s < set.size(); ++s) {
        if (set[s].trailing) trailing_.push_back(*set[s].trailing);
        for (std::size_t i = 0; i < set[s].header.tensors.size(); ++i)
            locations_.push_back({s, i, set[s].header.tensors[i].type,
                                  set[s].header.tensors[i].row_bytes(), set[s].big_endian});
        shards_.push_back(std::move(set[s].tensors));
    }
    return present_as_one_model(set, keys->no);  // moves the headers out: done last
}

void GgufReader::verify() {
    if (!trailing_.empty()) throw trailing_.front();
}

const GgufReader::Location& GgufReader::location(std::size_t index) const {
    if (index >= locations_.size())
        throw Error("tensor index " + std::to_string(index) + " out of range (" +
                    std::to_string(locations_.size()) + " tensors)");
    return locations_[index];
}

TensorView GgufReader::tensor(std::size_t index) {
    const Location& at = location(index);
    TensorView view = shards_[at.shard].view(at.local);
    // A big-endian file's tensors leave the reader in ggml's little-endian layout, as every
    // other stage expects: converted into a new buffer, one tensor (or row block) at a time.
    if (!at.big_endian) return view;
    return swapped_copy(at.type, view);
}

TensorView GgufReader::tensor_rows(std::size_t index, RowRange rows) {
    const Location& at = location(index);
    TensorView view = shards_[at.shard].view(at.local).slice(rows.first * at.row_bytes,
                                                             rows.count * at.row_bytes);
    if (!at.big_endian) return view;
    return swapped_copy(at.type, view);
}

}  // namespace ckplugin::gguf
