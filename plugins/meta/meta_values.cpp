#include "meta_values.hpp"

#include <bit>
#include <charconv>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "ck/utf8.hpp"
#include "meta_rules.hpp"

namespace ckplugin::meta {
using namespace ck;
namespace {

constexpr std::string_view option = "set";
constexpr std::string_view type_list = "u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str, arr:TYPE";

[[noreturn]] void bad_value(std::string_view key, std::string_view text, ValueType type,
                            const std::string& expected) {
    refuse(option, key_subject(key),
           "'" + std::string(text) + "' is not a " + std::string(value_type_name(type)) +
               ": expected " + expected);
}

// The whole text as a T, by from_chars: no sign for unsigned types, no leading '+' or spaces,
// no trailing characters. Integers and floats share it so both refuse the same way: out of
// range as such (`range` adds what the type holds), anything else as not being `expected`.
template <class T>
T parse_whole_number(std::string_view key, std::string_view text, ValueType type,
                     const std::string& range, const std::string& expected) {
    T v{};
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (ec == std::errc::result_out_of_range && ptr == end)
        refuse(option, key_subject(key),
               std::string(text) + " is out of range for " + std::string(value_type_name(type)) +
                   range);
    if (ec != std::errc{} || ptr != end) bad_value(key, text, type, expected);
    return v;
}

template <class T>
std::uint64_t integer_bits(std::string_view key, std::string_view text, ValueType type) {
    using limits = std::numeric_limits<T>;
    const std::string bounds =
        std::to_string(+limits::min()) + " to " + std::to_string(+limits::max());
    const T v = parse_whole_number<T>(key, text, type, " (" + bounds + ")",
                                      "a decimal integer from " + bounds);
    // Metadata keeps an integer's own bytes, zero-extended (as the gguf reader does).
    return static_cast<std::make_unsigned_t<T>>(v);
}

template <class T>
std::uint64_t float_bits(std::string_view key, std::string_view text, ValueType type) {
    const T v =
        parse_whole_number<T>(key, text, type, "", "a decimal number such as 1e-05, or inf or nan");
    return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(v);
}

// The raw bits of one fixed-size value (Value::scalar's form).
std::uint64_t scalar_bits(std::string_view key, std::string_view text, ValueType type) {
    switch (type) {
        case ValueType::u8:
            return integer_bits<std::uint8_t>(key, text, type);
        case ValueType::i8:
            return integer_bits<std::int8_t>(key, text, type);
        case ValueType::u16:
            return integer_bits<std::uint16_t>(key, text, type);
        case ValueType::i16:
            return integer_bits<std::int16_t>(key, text, type);
        case ValueType::u32:
            return integer_bits<std::uint32_t>(key, text, type);
        case ValueType::i32:
            return integer_bits<std::int32_t>(key, text, type);
        case ValueType::u64:
            return integer_bits<std::uint64_t>(key, text, type);
        case ValueType::i64:
            return integer_bits<std::int64_t>(key, text, type);
        case ValueType::f32:
            return float_bits<float>(key, text, type);
        case ValueType::f64:
            return float_bits<double>(key, text, type);
        case ValueType::boolean:
            if (text == "true") return 1;
            if (text == "false") return 0;
            bad_value(key, text, type, "true or false");
        default:
            break;
    }
    refuse(option, key_subject(key), "not a fixed-size type");  // unreachable: callers check
}

std::optional<ValueType> scalar_type(std::string_view name) {
    auto type = value_type_from_name(name);
    if (!type || *type == ValueType::array) return std::nullopt;
    return type;
}

// `arr:TYPE:V V V`: elements separated by spaces (`arr[TYPE]` would need `\]` in a pipeline).
// Strings have no separator that could not also be inside one, so arrays of strings are not
// offered.
Value parse_array(std::string_view key, std::string_view typed) {
    const std::size_t colon = typed.find(':');
    if (colon == std::string_view::npos)
        refuse(option, key_subject(key), "expected KEY=arr:TYPE:V V V, e.g. x=arr:i32:1 2 3");
    const std::string_view element = typed.substr(0, colon), items = typed.substr(colon + 1);
    const auto type = scalar_type(element);
    if (!type || *type == ValueType::string)
        refuse(option, key_subject(key),
               "arrays of '" + std::string(element) +
                   "' are not supported (element types: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 "
                   "bool)");
    const std::size_t size = value_type_size(*type);
    std::vector<std::byte> bytes;
    std::uint64_t count = 0;
    std::istringstream words{std::string(items)};
    for (std::string word; words >> word; ++count) {
        const std::uint64_t bits = scalar_bits(key, word, *type);
        for (std::size_t b = 0; b < size; ++b)  // GGUF arrays are little-endian
            bytes.push_back(static_cast<std::byte>(bits >> (8 * b)));
    }
    return Value::of_array(ArrayValue::of_raw(*type, count, bytes));
}

}  // namespace

bool names_its_type(std::string_view text) {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view name = text.substr(0, colon);
    return name == "arr" || scalar_type(name).has_value();
}

Value parse_value_as(ValueType type, std::string_view text, std::string_view key) {
    if (type != ValueType::string) return Value::scalar(type, scalar_bits(key, text, type));
    if (auto at = invalid_utf8_at(text))
        refuse(option, key_subject(key),
               "the value is not valid UTF-8 (byte " + std::to_string(*at) + ")");
    return Value::of_string(std::string(text));
}

Value parse_typed_value(std::string_view typed, std::string_view key) {
    const std::size_t colon = typed.find(':');
    if (colon == std::string_view::npos)
        refuse(option, key_subject(key),
               "expected KEY=TYPE:VALUE, e.g. general.name=str:My Model (types: " +
                   std::string(type_list) + ")");
    const std::string_view name = typed.substr(0, colon), text = typed.substr(colon + 1);
    if (name == "arr") return parse_array(key, text);
    const auto type = scalar_type(name);
    if (!type)
        refuse(option, key_subject(key),
               "unknown type '" + std::string(name) + "' (types: " + std::string(type_list) + ")");
    return parse_value_as(*type, text, key);
}

}  // namespace ckplugin::meta
