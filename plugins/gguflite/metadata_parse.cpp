// Reading GGUF-lite metadata lines into typed GGUF metadata. Arrays are built directly in
// GGUF's encoding (one buffer per array), so a 150k-entry tokenizer costs one allocation per
// key, not one per string.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "ck/error.hpp"
#include "json_text.hpp"
#include "metadata_text.hpp"

namespace ckplugin::gguflite {
using namespace ck;
namespace {

struct Line {
    std::string_view text;
    std::uint64_t offset;  // of its first byte in the file
    std::uint64_t number;  // 1-based
};

[[noreturn]] void fail(const std::string& file, const Line& line, std::size_t at,
                       const std::string& message, std::string_view key = {}) {
    std::string subject = "metadata line " + std::to_string(line.number);
    if (!key.empty()) subject += " (key '" + std::string(key) + "')";
    throw Error(message, file, line.offset + at, subject);
}

void store_le(std::vector<std::byte>& out, std::uint64_t v, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) out.push_back(static_cast<std::byte>(v >> 8 * k));
}

// Inclusive range of an integer type, as int64 / uint64 bounds.
struct IntRange {
    bool is_signed;
    std::int64_t min;
    std::uint64_t max;
};

std::optional<IntRange> int_range(ValueType t) {
    switch (t) {
        case ValueType::u8:
            return IntRange{false, 0, 0xff};
        case ValueType::i8:
            return IntRange{true, -128, 127};
        case ValueType::u16:
            return IntRange{false, 0, 0xffff};
        case ValueType::i16:
            return IntRange{true, -32768, 32767};
        case ValueType::u32:
            return IntRange{false, 0, 0xffffffffu};
        case ValueType::i32:
            return IntRange{true, std::numeric_limits<std::int32_t>::min(),
                            std::numeric_limits<std::int32_t>::max()};
        case ValueType::u64:
            return IntRange{false, 0, std::numeric_limits<std::uint64_t>::max()};
        case ValueType::i64:
            return IntRange{true, std::numeric_limits<std::int64_t>::min(),
                            std::numeric_limits<std::int64_t>::max()};
        default:
            return std::nullopt;
    }
}

// Parses one value of a fixed-size or string type at the cursor, appending its GGUF encoding
// (strings: u64 length + bytes) to `out`. Returns false with the cursor's error set.
class ValueReader {
  public:
    explicit ValueReader(JsonCursor& in) : in_(in) {}

    bool read(ValueType t, std::vector<std::byte>& out) {
        if (t == ValueType::string) {
            if (!in_.read_string(text_)) return false;
            store_le(out, text_.size(), 8);
            const auto* b = reinterpret_cast<const std::byte*>(text_.data());
            out.insert(out.end(), b, b + text_.size());
            return true;
        }
        if (t == ValueType::boolean) {
            bool v = false;
            if (!in_.read_bool(v)) return false;
            out.push_back(std::byte{v});
            return true;
        }
        if (t == ValueType::f32 || t == ValueType::f64) return read_float(t, out);
        return read_integer(t, out);
    }

  private:
    bool read_integer(ValueType t, std::vector<std::byte>& out) {
        const IntRange range = *int_range(t);
        const std::size_t at = in_.pos();
        std::string_view token;
        bool integral = false;
        if (!in_.read_number(token, integral)) return false;
        if (!integral)
            return in_.fail("expected an integer for " + std::string(value_type_name(t)) +
                                ", got " + std::string(token),
                            at);
        const std::string out_of_range =
            std::string(token) + " is out of range for " + std::string(value_type_name(t));
        std::uint64_t bits = 0;
        if (token.front() == '-') {
            std::int64_t v = 0;
            auto r = std::from_chars(token.data(), token.data() + token.size(), v);
            if (r.ec != std::errc() || (v < range.min) || (!range.is_signed && v != 0))
                return in_.fail(out_of_range, at);
            bits = static_cast<std::uint64_t>(v);
        } else {
            std::uint64_t v = 0;
            auto r = std::from_chars(token.data(), token.data() + token.size(), v);
            if (r.ec != std::errc() || v > range.max) return in_.fail(out_of_range, at);
            bits = v;
        }
        store_le(out, bits, value_type_size(t));
        return true;
    }

    bool read_float(ValueType t, std::vector<std::byte>& out) {
        const bool f32 = t == ValueType::f32;
        const std::size_t at = in_.pos();
        if (in_.peek() == '"') {
            if (!in_.read_string(text_)) return false;
            std::uint64_t bits = 0;
            if (text_ == "nan")
                bits = f32 ? 0x7fc00000u : 0x7ff8000000000000ull;
            else if (text_ == "inf")
                bits = f32 ? 0x7f800000u : 0x7ff0000000000000ull;
            else if (text_ == "-inf")
                bits = f32 ? 0xff800000u : 0xfff0000000000000ull;
            else
                return in_.fail("expected a number, \"nan\", \"inf\" or \"-inf\" for " +
                                    std::string(value_type_name(t)),
                                at);
            store_le(out, bits, f32 ? 4 : 8);
            return true;
        }
        std::string_view token;
        bool integral = false;
        if (!in_.read_number(token, integral)) return false;
        const char* first = token.data();
        const char* last = first + token.size();
        std::from_chars_result r;
        std::uint64_t bits = 0;
        if (f32) {
            float v = 0;
            r = std::from_chars(first, last, v);
            bits = std::bit_cast<std::uint32_t>(v);
        } else {
            double v = 0;
            r = std::from_chars(first, last, v);
            bits = std::bit_cast<std::uint64_t>(v);
        }
        if (r.ec != std::errc() || r.ptr != last)
            return in_.fail(std::string(token) + " is out of range for " +
                                std::string(value_type_name(t)) +
                                " (write \"inf\" / \"-inf\" for infinities)",
                            at);
        store_le(out, bits, f32 ? 4 : 8);
        return true;
    }

    JsonCursor& in_;
    std::string text_;
};

// Whether the text before the first ':' names a type (a scalar type, or arr[...]): then the
// line is typed and must parse; anything else ("http://...") is a plain string.
bool looks_typed(std::string_view value, std::size_t colon) {
    const std::string_view prefix = value.substr(0, colon);
    return prefix == "arr" || prefix.starts_with("arr[") || value_type_from_name(prefix);
}

Value parse_typed(std::string_view value, std::size_t colon, const Line& line,
                  std::size_t value_pos, std::string_view key, const std::string& file) {
    const std::string_view prefix = value.substr(0, colon);
    JsonCursor in(value, colon + 1);
    ValueReader reader(in);
    auto check = [&](bool ok) {
        if (!ok) fail(file, line, value_pos + in.error_pos(), in.error(), key);
    };
    auto finish = [&] {
        in.skip_space();
        if (!in.at_end())
            fail(file, line, value_pos + in.pos(), "unexpected text after the value", key);
    };
    if (!prefix.starts_with("arr")) {
        const ValueType t = *value_type_from_name(prefix);
        std::vector<std::byte> encoded;
        in.skip_space();
        check(reader.read(t, encoded));
        finish();
        if (t == ValueType::string)
            return Value::of_string(
                std::string(reinterpret_cast<const char*>(encoded.data()) + 8, encoded.size() - 8));
        std::uint64_t raw = 0;  // the little-endian encoding's value
        for (std::size_t k = 0; k < encoded.size(); ++k)
            raw |= std::uint64_t(std::to_integer<unsigned>(encoded[k])) << 8 * k;
        return Value::scalar(t, raw);
    }
    std::optional<ValueType> element;
    if (prefix.size() > 5 && prefix[3] == '[' && prefix.back() == ']')
        element = value_type_from_name(prefix.substr(4, prefix.size() - 5));
    if (!element || *element == ValueType::array)
        fail(file, line, value_pos,
             "bad array type '" + std::string(prefix) +
                 "': expected arr[T] with T one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str",
             key);
    auto encoded = std::make_shared<std::vector<std::byte>>();
    std::uint64_t count = 0;
    in.skip_space();
    if (!in.accept('['))
        fail(file, line, value_pos + in.pos(),
             "expected a JSON array ('[') for " + std::string(prefix), key);
    in.skip_space();
    if (!in.accept(']')) {
        while (true) {
            in.skip_space();
            check(reader.read(*element, *encoded));
            ++count;
            in.skip_space();
            if (in.accept(']')) break;
            if (!in.accept(','))
                fail(file, line, value_pos + in.pos(), "expected ',' or ']' in the array", key);
        }
    }
    finish();
    std::span<const std::byte> view(*encoded);
    return Value::of_array(ArrayValue(*element, count, view, std::move(encoded)));
}

}  // namespace

Metadata parse_metadata(std::string_view text, std::uint64_t base, const std::string& file) {
    Metadata metadata;
    std::uint64_t number = 0;
    std::size_t start = 0;
    if (auto bad = invalid_utf8_at(text)) {
        const std::size_t line_start = text.rfind('\n', *bad) + 1;  // npos + 1 == 0
        const auto line_number =
            static_cast<std::uint64_t>(std::count(text.begin(), text.begin() + *bad, '\n')) + 1;
        fail(file, Line{{}, base + line_start, line_number}, *bad - line_start,
             "metadata is not valid UTF-8");
    }
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        Line line{text.substr(start, end - start), base + start, ++number};
        start = end + 1;
        // A hand-edited file may have Windows line ends; blank lines separate nothing.
        if (line.text.ends_with('\r')) line.text.remove_suffix(1);
        if (line.text.empty()) continue;

        const std::size_t eq = line.text.find('=');
        if (eq == std::string_view::npos)
            fail(file, line, 0, "no '=' in the line (expected key=value or key=<type>:<json>)");
        if (eq == 0) fail(file, line, 0, "empty key before '='");
        const std::string_view key = line.text.substr(0, eq);
        const std::string_view value = line.text.substr(eq + 1);
        const std::size_t colon = value.find(':');
        Value parsed = colon != std::string_view::npos && looks_typed(value, colon)
                           ? parse_typed(value, colon, line, eq + 1, key, file)
                           : Value::of_string(std::string(value));
        if (!metadata.insert(std::string(key), std::move(parsed)))
            fail(file, line, 0, "duplicate key", key);
    }
    return metadata;
}

}  // namespace ckplugin::gguflite
