#include "ck/safetensors/metadata_json.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/support/json_string.hpp"
#include "ck/utf8.hpp"

namespace ck::safetensors {
using namespace ck;
namespace {

using nlohmann::json;

bool is_float(ValueType t) {
    return t == ValueType::f32 || t == ValueType::f64;
}
bool is_signed(ValueType t) {
    return t == ValueType::i8 || t == ValueType::i16 || t == ValueType::i32 || t == ValueType::i64;
}

void append_string(std::string& out, std::string_view s, bool& replaced) {
    if (support::append_json_string(out, s, support::JsonEscape::utf8)) replaced = true;
}

void append_bits(std::string& out, std::uint64_t bits, int hex_digits) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "\"0x%0*llx\"", hex_digits,
                  static_cast<unsigned long long>(bits));
    out += buf;
}

// The shortest text that reads back (as a JSON parser reads it: into a double) to `value`.
template <class Float>
void append_float(std::string& out, Float value) {
    if (value == 0 && std::signbit(value)) {
        out += "-0.0";  // "-0" would read back as the integer 0
        return;
    }
    char buf[40];
    auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    if (static_cast<Float>(std::strtod(std::string(buf, end).c_str(), nullptr)) != value)
        end = std::to_chars(buf, buf + sizeof buf, static_cast<double>(value)).ptr;
    out.append(buf, end);
}

void append_scalar(std::string& out, ValueType type, std::uint64_t raw) {
    const Value v = Value::scalar(type, raw);
    switch (type) {
        case ValueType::boolean:
            out += raw ? "true" : "false";
            return;
        case ValueType::f32: {
            const float f = std::bit_cast<float>(static_cast<std::uint32_t>(raw));
            if (std::isfinite(f))
                append_float(out, f);
            else
                append_bits(out, raw, 8);
            return;
        }
        case ValueType::f64: {
            const double d = std::bit_cast<double>(raw);
            if (std::isfinite(d))
                append_float(out, d);
            else
                append_bits(out, raw, 16);
            return;
        }
        default:
            if (is_signed(type))
                out += std::to_string(*v.as_int());
            else
                out += std::to_string(raw);
    }
}

[[noreturn]] void fail(const std::string& message) {
    throw std::runtime_error(message);
}

std::uint64_t float_bits(const json& j, ValueType type) {
    if (j.is_string()) {
        // Non-finite values are written as their bits.
        const std::string s = j.get<std::string>();
        std::uint64_t bits = 0;
        const int digits = type == ValueType::f32 ? 8 : 16;
        if (s.size() != std::size_t(2 + digits) || s.compare(0, 2, "0x") != 0 ||
            std::from_chars(s.data() + 2, s.data() + s.size(), bits, 16).ptr != s.data() + s.size())
            fail("expected a number or a bit pattern such as \"0x7fc00000\", got \"" + s + "\"");
        return bits;
    }
    if (!j.is_number()) fail("expected a number, got " + j.dump());
    const double d = j.get<double>();
    if (type == ValueType::f64) return std::bit_cast<std::uint64_t>(d);
    return std::bit_cast<std::uint32_t>(static_cast<float>(d));
}

std::uint64_t integer_bits(const json& j, ValueType type) {
    if (!j.is_number_integer()) fail("expected an integer, got " + j.dump());
    const std::size_t size = value_type_size(type);
    if (is_signed(type)) {
        const auto v = j.get<std::int64_t>();
        if (j.is_number_unsigned() && j.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
            fail(j.dump() + " does not fit " + std::string(value_type_name(type)));
        const std::int64_t limit = size == 8 ? INT64_MAX : (std::int64_t(1) << (8 * size - 1)) - 1;
        if (v > limit || v < -limit - 1)
            fail(j.dump() + " does not fit " + std::string(value_type_name(type)));
        const std::uint64_t mask =
            size == 8 ? ~std::uint64_t(0) : (std::uint64_t(1) << 8 * size) - 1;
        return static_cast<std::uint64_t>(v) & mask;
    }
    if (!j.is_number_unsigned())
        fail(j.dump() + " does not fit " + std::string(value_type_name(type)));
    const auto v = j.get<std::uint64_t>();
    if (size < 8 && v >> (8 * size) != 0)
        fail(j.dump() + " does not fit " + std::string(value_type_name(type)));
    return v;
}

std::uint64_t scalar_bits(const json& j, ValueType type) {
    if (type == ValueType::boolean) {
        if (!j.is_boolean()) fail("expected true or false, got " + j.dump());
        return j.get<bool>() ? 1 : 0;
    }
    if (is_float(type)) return float_bits(j, type);
    return integer_bits(j, type);
}

Value typed_value(const json& j, ValueType type, ValueType element) {
    if (type == ValueType::string) {
        if (!j.is_string()) fail("expected a string, got " + j.dump());
        return Value::of_string(j.get<std::string>());
    }
    if (type != ValueType::array) return Value::scalar(type, scalar_bits(j, type));
    if (!j.is_array()) fail("expected an array");
    if (element == ValueType::string) {
        std::vector<std::string> items;
        items.reserve(j.size());
        for (const json& item : j) {
            if (!item.is_string()) fail("expected an array of strings, got " + item.dump());
            items.push_back(item.get<std::string>());
        }
        return Value::of_array(ArrayValue::of_strings(items));
    }
    const std::size_t size = value_type_size(element);
    std::vector<std::byte> bytes(j.size() * size);
    std::size_t i = 0;
    for (const json& item : j) {
        const std::uint64_t bits = scalar_bits(item, element);
        for (std::size_t k = 0; k < size; ++k)  // the low `size` bytes, little-endian
            bytes[size * i + k] = static_cast<std::byte>(bits >> (8 * k));
        ++i;
    }
    return Value::of_array(ArrayValue::of_raw(element, j.size(), bytes));
}

// The type another tool's plain JSON value most likely had in GGUF.
ValueType inferred_scalar(const json& j) {
    if (j.is_string()) return ValueType::string;
    if (j.is_boolean()) return ValueType::boolean;
    if (j.is_number_unsigned())
        return j.get<std::uint64_t>() <= UINT32_MAX ? ValueType::u32 : ValueType::u64;
    if (j.is_number_integer())
        return j.get<std::int64_t>() >= INT32_MIN ? ValueType::i32 : ValueType::i64;
    if (j.is_number_float()) return ValueType::f32;
    fail("cannot tell the GGUF type of " + j.dump());
}

ValueType widest(ValueType a, ValueType b) {
    if (a == b) return a;
    auto rank = [](ValueType t) {
        switch (t) {
            case ValueType::u32:
                return 0;
            case ValueType::i32:
                return 1;
            case ValueType::u64:
                return 2;
            case ValueType::i64:
                return 3;
            case ValueType::f32:
                return 4;
            default:
                return -1;
        }
    };
    if (rank(a) < 0 || rank(b) < 0) fail("an array mixes strings, booleans and numbers");
    if ((a == ValueType::i32 && b == ValueType::u64) ||
        (a == ValueType::u64 && b == ValueType::i32))
        return ValueType::i64;
    return rank(a) > rank(b) ? a : b;
}

}  // namespace

std::string type_label(const Value& value) {
    if (value.type() != ValueType::array) return std::string(value_type_name(value.type()));
    return "arr[" + std::string(value_type_name(value.array().element_type())) + "]";
}

std::string to_json_text(const Value& value, bool& replaced) {
    std::string out;
    switch (value.type()) {
        case ValueType::string:
            append_string(out, value.str(), replaced);
            return out;
        case ValueType::array: {
            const ArrayValue& a = value.array();
            out += '[';
            if (a.element_type() == ValueType::string) {
                bool first = true;
                a.for_each_string([&](std::string_view s) {
                    if (!first) out += ',';
                    first = false;
                    append_string(out, s, replaced);
                    return true;
                });
            } else {
                for (std::uint64_t i = 0; i < a.size(); ++i) {
                    if (i) out += ',';
                    append_scalar(out, a.element_type(), a.raw_at(i));
                }
            }
            out += ']';
            return out;
        }
        default:
            append_scalar(out, value.type(), value.raw());
            return out;
    }
}

Value from_json_text(std::string_view text, std::string_view label) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        fail(std::string("not JSON: ") + e.what());
    }
    if (label.empty()) {
        if (!j.is_array()) return typed_value(j, inferred_scalar(j), ValueType::u8);
        ValueType element = ValueType::i32;  // an empty array has no type to tell
        for (std::size_t i = 0; i < j.size(); ++i)
            element = i == 0 ? inferred_scalar(j[i]) : widest(element, inferred_scalar(j[i]));
        return typed_value(j, ValueType::array, element);
    }
    if (label.starts_with("arr[") && label.ends_with("]")) {
        const auto element = value_type_from_name(label.substr(4, label.size() - 5));
        if (!element || *element == ValueType::array)
            fail("unknown GGUF type '" + std::string(label) + "'");
        return typed_value(j, ValueType::array, *element);
    }
    const auto type = value_type_from_name(label);
    if (!type || *type == ValueType::array) fail("unknown GGUF type '" + std::string(label) + "'");
    return typed_value(j, *type, ValueType::u8);
}

}  // namespace ck::safetensors
