#include "json_text.hpp"

#include "ck/support/json_string.hpp"

#include <bit>
#include <charconv>
#include <cmath>

namespace ckplugin::gguflite {
using namespace ck;
namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

template <class Float>
void append_float(std::string& out, Float v) {
    if (std::isnan(v)) {
        out += "\"nan\"";
    } else if (std::isinf(v)) {
        out += v < 0 ? "\"-inf\"" : "\"inf\"";
    } else {
        char buf[64];
        // Shortest form that reads back to the same value (also "-0" for negative zero). Its
        // syntax is always a valid JSON number: no leading '+', no bare '.', exponent "e-05".
        auto r = std::to_chars(buf, buf + sizeof buf, v);
        out.append(buf, r.ptr);
    }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
    // The caller has checked that `s` is UTF-8 (GGUF-lite refuses anything else).
    support::append_json_string(out, s, support::JsonEscape::utf8_short_escapes_only);
}

void append_json_f32(std::string& out, std::uint32_t bits) {
    append_float(out, std::bit_cast<float>(bits));
}

void append_json_f64(std::string& out, std::uint64_t bits) {
    append_float(out, std::bit_cast<double>(bits));
}

void JsonCursor::skip_space() noexcept {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
}

bool JsonCursor::accept(char c) noexcept {
    if (peek() != c || at_end()) return false;
    ++pos_;
    return true;
}

bool JsonCursor::fail(std::string message, std::size_t at) {
    error_ = std::move(message);
    error_pos_ = at;
    return false;
}

bool JsonCursor::read_hex4(std::uint32_t& out) {
    out = 0;
    for (int k = 0; k < 4; ++k, ++pos_) {
        const char c = peek();
        unsigned digit = 0;
        if (c >= '0' && c <= '9')
            digit = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            digit = static_cast<unsigned>(c - 'A' + 10);
        else
            return fail("\\u needs four hex digits", pos_);
        out = out * 16 + digit;
    }
    return true;
}

bool JsonCursor::read_string(std::string& out) {
    out.clear();
    if (!accept('"')) return fail("expected a JSON string (\"...\")", pos_);
    const std::size_t start = pos_ - 1;
    std::size_t plain = pos_;
    while (true) {
        if (at_end()) return fail("string is not closed (missing '\"')", start);
        const char c = text_[pos_];
        if (c == '"') {
            out.append(text_.substr(plain, pos_ - plain));
            ++pos_;
            return true;
        }
        if (static_cast<unsigned char>(c) < 0x20)
            return fail("raw control character in a string (JSON needs an escape)", pos_);
        if (c != '\\') {
            ++pos_;
            continue;
        }
        out.append(text_.substr(plain, pos_ - plain));
        const std::size_t escape = pos_++;
        const char e = peek();
        ++pos_;
        switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                std::uint32_t cp = 0;
                if (!read_hex4(cp)) return false;
                if (cp >= 0xdc00 && cp <= 0xdfff)
                    return fail("lone low surrogate \\u escape", escape);
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    std::uint32_t low = 0;
                    if (!accept('\\') || !accept('u') || !read_hex4(low) || low < 0xdc00 ||
                        low > 0xdfff)
                        return fail("high surrogate \\u escape without its low half", escape);
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                }
                append_utf8(out, cp);
                break;
            }
            default:
                return fail("unknown escape in a string", escape);
        }
        plain = pos_;
    }
}

bool JsonCursor::read_number(std::string_view& token, bool& integral) {
    const std::size_t start = pos_;
    accept('-');
    if (accept('0')) {
    } else if (is_digit(peek()) && peek() != '0') {
        while (is_digit(peek())) ++pos_;
    } else {
        return fail("expected a JSON number", start);
    }
    integral = true;
    if (accept('.')) {
        integral = false;
        if (!is_digit(peek())) return fail("a digit must follow the decimal point", pos_);
        while (is_digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
        integral = false;
        ++pos_;
        if (peek() == '+' || peek() == '-') ++pos_;
        if (!is_digit(peek())) return fail("a digit must follow the exponent", pos_);
        while (is_digit(peek())) ++pos_;
    }
    token = text_.substr(start, pos_ - start);
    return true;
}

bool JsonCursor::read_bool(bool& out) {
    if (text_.substr(pos_, 4) == "true") {
        pos_ += 4;
        out = true;
        return true;
    }
    if (text_.substr(pos_, 5) == "false") {
        pos_ += 5;
        out = false;
        return true;
    }
    return fail("expected true or false", pos_);
}

}  // namespace ckplugin::gguflite
