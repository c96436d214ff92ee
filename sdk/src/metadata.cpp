#include "ck/metadata.hpp"

#include "ck/utf8.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ck/enum_names.hpp"
#include "ck/error.hpp"

namespace ck {
namespace {

constexpr std::array<std::string_view, 13> type_names = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"};
constexpr std::array<std::size_t, 13> type_sizes = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

std::uint64_t load_le(const std::byte* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
        v |= std::uint64_t(std::to_integer<unsigned>(p[i])) << (8 * i);
    return v;
}

void store_le(std::vector<std::byte>& out, std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

std::int64_t sign_extend(std::uint64_t raw, std::size_t bytes) {
    if (bytes == 8) return static_cast<std::int64_t>(raw);
    const unsigned shift = 64 - 8 * static_cast<unsigned>(bytes);
    return static_cast<std::int64_t>(raw << shift) >> shift;
}

bool is_signed(ValueType t) {
    return t == ValueType::i8 || t == ValueType::i16 || t == ValueType::i32 || t == ValueType::i64;
}

// Shows a string with control bytes and invalid UTF-8 escaped, so display never breaks a line
// or a terminal.
std::string display_quoted(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size(); ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else if (c < 0x80) {
            out += static_cast<char>(c);
        } else {
            // Accept a well-formed UTF-8 sequence as is (ck::utf8: no overlong forms, no
            // surrogates); escape anything else byte by byte.
            const std::size_t len = utf8_sequence_length(s, i);
            if (len != 0) {
                out.append(s.substr(i, len));
                i += len - 1;
            } else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02x", c);
                out += buf;
            }
        }
    }
    return out + "\"";
}

std::string scalar_text(ValueType t, std::uint64_t raw) {
    switch (t) {
        case ValueType::f32: {
            char buf[48];
            std::snprintf(
                buf, sizeof buf, "%.9g",
                static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(raw))));
            return buf;
        }
        case ValueType::f64: {
            char buf[48];
            std::snprintf(buf, sizeof buf, "%.17g", std::bit_cast<double>(raw));
            return buf;
        }
        case ValueType::boolean:
            return raw ? "true" : "false";
        default:
            if (is_signed(t)) return std::to_string(sign_extend(raw, value_type_size(t)));
            return std::to_string(raw);
    }
}

}  // namespace

std::string_view value_type_name(ValueType t) noexcept {
    return enum_name(type_names, t);
}

std::optional<ValueType> value_type_from_name(std::string_view name) noexcept {
    return enum_from_name<ValueType>(type_names, name);
}

std::size_t value_type_size(ValueType t) noexcept {
    auto i = static_cast<std::uint32_t>(t);
    return i < type_sizes.size() ? type_sizes[i] : 0;
}

// ---- ArrayValue ----

ArrayValue::ArrayValue(ValueType element_type, std::uint64_t count,
                       std::span<const std::byte> encoded, std::shared_ptr<const void> owner)
    : element_type_(element_type), count_(count), encoded_(encoded), owner_(std::move(owner)) {}

namespace {
template <class Strings>
ArrayValue strings_array(const Strings& items) {
    auto bytes = std::make_shared<std::vector<std::byte>>();
    for (const auto& s : items) {
        store_le(*bytes, s.size(), 8);
        auto b = std::as_bytes(std::span(s.data(), s.size()));
        bytes->insert(bytes->end(), b.begin(), b.end());
    }
    std::span<const std::byte> view(*bytes);
    return ArrayValue(ValueType::string, items.size(), view, std::move(bytes));
}
}  // namespace

ArrayValue ArrayValue::of_strings(std::span<const std::string> items) {
    return strings_array(items);
}
ArrayValue ArrayValue::of_strings(std::span<const std::string_view> items) {
    return strings_array(items);
}

ArrayValue ArrayValue::of_raw(ValueType element_type, std::uint64_t count,
                              std::span<const std::byte> bytes) {
    if (element_type == ValueType::string || element_type == ValueType::array ||
        bytes.size() != count * value_type_size(element_type))
        throw Error("array of " + std::string(value_type_name(element_type)) +
                    ": byte size does not match the element count");
    auto owned = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
    std::span<const std::byte> view(*owned);
    return ArrayValue(element_type, count, view, std::move(owned));
}

ArrayValue ArrayValue::of_host_order(ValueType element_type, std::uint64_t count,
                                     const void* values, std::size_t element_size) {
    std::vector<std::byte> bytes(count * element_size);
    if (!bytes.empty()) std::memcpy(bytes.data(), values, bytes.size());
    if constexpr (std::endian::native == std::endian::big)
        for (std::size_t at = 0; at < bytes.size(); at += element_size)
            std::reverse(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                         bytes.begin() + static_cast<std::ptrdiff_t>(at + element_size));
    return of_raw(element_type, count, bytes);
}

std::uint64_t ArrayValue::raw_at(std::uint64_t i) const {
    std::size_t size = value_type_size(element_type_);
    if (size == 0 || i >= count_) throw Error("array element out of range");
    return load_le(encoded_.data() + i * size, size);
}

void ArrayValue::for_each_string(const std::function<bool(std::string_view)>& fn) const {
    if (element_type_ != ValueType::string) throw Error("not a string array");
    const std::byte* p = encoded_.data();
    const std::byte* end = p + encoded_.size();
    for (std::uint64_t i = 0; i < count_; ++i) {
        if (end - p < 8) throw Error("string array is shorter than its count");
        std::uint64_t len = load_le(p, 8);
        p += 8;
        if (len > static_cast<std::uint64_t>(end - p))
            throw Error("string array element runs past its end");
        if (!fn(std::string_view(reinterpret_cast<const char*>(p), len))) return;
        p += len;
    }
}

std::string_view ArrayValue::string_at(std::uint64_t i) const {
    std::string_view found;
    std::uint64_t k = 0;
    for_each_string([&](std::string_view s) {
        if (k++ == i) {
            found = s;
            return false;
        }
        return true;
    });
    if (k <= i) throw Error("array element out of range");
    return found;
}

// ---- Value ----

Value Value::scalar(ValueType type, std::uint64_t raw_bits) {
    Value v;
    v.type_ = type;
    v.raw_ = raw_bits;
    return v;
}
Value Value::of_i32(std::int32_t v) {
    return scalar(ValueType::i32, static_cast<std::uint32_t>(v));
}
Value Value::of_f32(float v) {
    return scalar(ValueType::f32, std::bit_cast<std::uint32_t>(v));
}
Value Value::of_f64(double v) {
    return scalar(ValueType::f64, std::bit_cast<std::uint64_t>(v));
}
Value Value::of_string(std::string s) {
    Value v;
    v.type_ = ValueType::string;
    v.string_ = std::move(s);
    return v;
}
Value Value::of_array(ArrayValue a) {
    Value v;
    v.type_ = ValueType::array;
    v.array_ = std::move(a);
    return v;
}

bool Value::is_integer() const noexcept {
    switch (type_) {
        case ValueType::u8:
        case ValueType::i8:
        case ValueType::u16:
        case ValueType::i16:
        case ValueType::u32:
        case ValueType::i32:
        case ValueType::u64:
        case ValueType::i64:
            return true;
        default:
            return false;
    }
}

std::optional<std::int64_t> Value::as_int() const noexcept {
    if (!is_integer()) return std::nullopt;
    if (is_signed(type_)) return sign_extend(raw_, value_type_size(type_));
    if (raw_ > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
    return static_cast<std::int64_t>(raw_);
}

std::optional<std::uint64_t> Value::as_uint() const noexcept {
    if (!is_integer()) return std::nullopt;
    if (is_signed(type_)) {
        std::int64_t s = sign_extend(raw_, value_type_size(type_));
        if (s < 0) return std::nullopt;
        return static_cast<std::uint64_t>(s);
    }
    return raw_;
}

std::optional<double> Value::as_double() const noexcept {
    if (type_ == ValueType::f32) return std::bit_cast<float>(static_cast<std::uint32_t>(raw_));
    if (type_ == ValueType::f64) return std::bit_cast<double>(raw_);
    if (is_signed(type_)) return static_cast<double>(sign_extend(raw_, value_type_size(type_)));
    if (is_integer()) return static_cast<double>(raw_);
    return std::nullopt;
}

std::optional<float> Value::as_f32() const noexcept {
    if (type_ != ValueType::f32) return std::nullopt;
    return std::bit_cast<float>(static_cast<std::uint32_t>(raw_));
}

std::string Value::to_display(std::size_t max_items) const {
    if (type_ == ValueType::string) return display_quoted(string_);
    if (type_ != ValueType::array) return scalar_text(type_, raw_);
    const ArrayValue& a = array_;
    std::string out = "[" + std::string(value_type_name(a.element_type())) + " x " +
                      std::to_string(a.size()) + "]";
    if (a.size() == 0) return out;
    out += " [";
    std::uint64_t shown = 0;
    if (a.element_type() == ValueType::string) {
        a.for_each_string([&](std::string_view s) {
            if (shown == max_items) return false;
            if (shown++) out += ", ";
            out += display_quoted(s);
            return true;
        });
    } else {
        for (; shown < a.size() && shown < max_items; ++shown) {
            if (shown) out += ", ";
            out += scalar_text(a.element_type(), a.raw_at(shown));
        }
    }
    if (a.size() > shown) out += ", ...";
    return out + "]";
}

// ---- Metadata ----

const Value* Metadata::find(std::string_view key) const {
    auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &entries_[it->second].second;
}

void Metadata::set(std::string key, Value value) {
    auto it = index_.find(key);
    if (it != index_.end()) {
        entries_[it->second].second = std::move(value);
        return;
    }
    index_.emplace(key, entries_.size());
    entries_.emplace_back(std::move(key), std::move(value));
}

bool Metadata::insert(std::string key, Value value) {
    if (index_.count(key)) return false;
    index_.emplace(key, entries_.size());
    entries_.emplace_back(std::move(key), std::move(value));
    return true;
}

bool Metadata::erase(std::string_view key) {
    auto it = index_.find(std::string(key));
    if (it == index_.end()) return false;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
    reindex();
    return true;
}

void Metadata::reindex() {
    index_.clear();
    for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
}

}  // namespace ck
