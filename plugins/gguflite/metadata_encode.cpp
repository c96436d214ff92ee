// Writing GGUF metadata as GGUF-lite lines, and the comparison the round-trip check uses.
#include <algorithm>
#include <bit>
#include <cstring>

#include "ck/error.hpp"
#include "json_text.hpp"
#include "metadata_text.hpp"

namespace ckplugin::gguflite {
using namespace ck;
namespace {

constexpr std::uint32_t canonical_f32_nan = 0x7fc00000u;
constexpr std::uint64_t canonical_f64_nan = 0x7ff8000000000000ull;

std::uint64_t load_le(const std::byte* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t k = 0; k < n; ++k)
        v |= std::uint64_t(std::to_integer<unsigned>(p[k])) << 8 * k;
    return v;
}

bool is_signed(ValueType t) {
    return t == ValueType::i8 || t == ValueType::i16 || t == ValueType::i32 || t == ValueType::i64;
}

std::int64_t sign_extend(std::uint64_t raw, std::size_t bytes) {
    if (bytes == 8) return static_cast<std::int64_t>(raw);
    const unsigned shift = 64 - 8 * static_cast<unsigned>(bytes);
    return static_cast<std::int64_t>(raw << shift) >> shift;
}

bool is_nan_f32(std::uint64_t bits) {
    return (bits & 0x7fffffffu) > 0x7f800000u;
}
bool is_nan_f64(std::uint64_t bits) {
    return (bits & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}

// The bits a value reads back as: NaNs become the canonical one, bools 0/1.
std::uint64_t normalised(ValueType t, std::uint64_t raw) {
    if (t == ValueType::f32 && is_nan_f32(raw)) return canonical_f32_nan;
    if (t == ValueType::f64 && is_nan_f64(raw)) return canonical_f64_nan;
    if (t == ValueType::boolean) return raw != 0;
    return raw;
}

void check_text(std::string_view text, std::string_view key, const std::string& what) {
    if (auto bad = invalid_utf8_at(text))
        throw key_error(what + " is not valid UTF-8 (byte " + std::to_string(*bad) +
                            "); GGUF-lite metadata is UTF-8 text",
                        key);
}

// Appends one scalar; `changed` is set when it will not read back with the same bits.
void append_scalar(std::string& out, ValueType t, std::uint64_t raw, bool& changed) {
    changed = normalised(t, raw) != raw;
    switch (t) {
        case ValueType::f32:
            append_json_f32(out, static_cast<std::uint32_t>(raw));
            return;
        case ValueType::f64:
            append_json_f64(out, raw);
            return;
        case ValueType::boolean:
            out += raw != 0 ? "true" : "false";
            return;
        default:
            if (is_signed(t))
                out += std::to_string(sign_extend(raw, value_type_size(t)));
            else
                out += std::to_string(raw);
    }
}

void append_array(std::string& out, const ArrayValue& a, std::string_view key,
                  std::uint64_t& changed) {
    out += '[';
    const ValueType t = a.element_type();
    if (t == ValueType::string) {
        std::uint64_t index = 0;
        a.for_each_string([&](std::string_view s) {
            if (index > 0) out += ',';
            check_text(s, key, "string " + std::to_string(index) + " of the array");
            append_json_string(out, s);
            ++index;
            return true;
        });
    } else {
        const std::size_t size = value_type_size(t);
        const std::byte* p = a.encoded().data();
        for (std::uint64_t i = 0; i < a.size(); ++i) {
            if (i > 0) out += ',';
            bool element_changed = false;
            append_scalar(out, t, load_le(p + i * size, size), element_changed);
            changed += element_changed;
        }
    }
    out += ']';
}

}  // namespace

std::string encode_metadata(const Metadata& metadata, std::vector<std::string>& notes) {
    std::string text;
    for (const auto& [key, value] : metadata) {
        const std::string subject = key_subject(key);
        if (key.empty()) throw key_error("an empty key cannot be stored in GGUF-lite", key);
        if (key.find_first_of("=\n") != std::string::npos)
            throw key_error("a key with '=' or a newline cannot be stored in GGUF-lite", key);
        check_text(key, key, "the key");
        text += key;
        text += '=';
        if (value.type() == ValueType::array) {
            const ArrayValue& a = value.array();
            if (a.element_type() == ValueType::array)
                throw key_error("arrays of arrays cannot be stored in GGUF-lite", key);
            text += "arr[";
            text += value_type_name(a.element_type());
            text += "]:";
            std::uint64_t changed = 0;
            append_array(text, a, key, changed);
            if (changed > 0)
                notes.push_back(subject + ": " + std::to_string(changed) +
                                " array elements will read back normalised (NaN payloads "
                                "become the canonical NaN, bool bytes other than 0/1 become 1)");
        } else {
            text += value_type_name(value.type());
            text += ':';
            if (value.type() == ValueType::string) {
                check_text(value.str(), key, "the value");
                append_json_string(text, value.str());
            } else {
                bool changed = false;
                append_scalar(text, value.type(), value.raw(), changed);
                if (changed)
                    notes.push_back(subject + ": " + value.to_display() +
                                    " will read back as the canonical NaN (JSON has only "
                                    "\"nan\")");
            }
        }
        text += '\n';
    }
    return text;
}

bool same_after_round_trip(const Value& a, const Value& b) {
    if (a.type() != b.type()) return false;
    switch (a.type()) {
        case ValueType::string:
            return a.str() == b.str();
        case ValueType::array: {
            const ArrayValue &x = a.array(), &y = b.array();
            if (x.element_type() != y.element_type() || x.size() != y.size()) return false;
            if (x.element_type() == ValueType::string) {
                auto xs = x.encoded(), ys = y.encoded();
                return std::equal(xs.begin(), xs.end(), ys.begin(), ys.end());
            }
            const std::size_t size = value_type_size(x.element_type());
            for (std::uint64_t i = 0; i < x.size(); ++i)
                if (normalised(x.element_type(), load_le(x.encoded().data() + i * size, size)) !=
                    load_le(y.encoded().data() + i * size, size))
                    return false;
            return true;
        }
        default:
            return normalised(a.type(), a.raw()) == b.raw();
    }
}

}  // namespace ckplugin::gguflite
