#include "ck/support/json_string.hpp"

#include <cstdint>

#include "ck/utf8.hpp"

namespace ck::support {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

void append_u_escape(std::string& out, std::uint32_t unit) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex_digits[(unit >> shift) & 0xf];
}

// The code point of a well-formed sequence of `length` bytes at s[i].
std::uint32_t decode(std::string_view s, std::size_t i, std::size_t length) {
    const auto lead = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = length == 1   ? lead
                       : length == 2 ? lead & 0x1fu
                       : length == 3 ? lead & 0x0fu
                                     : lead & 0x07u;
    for (std::size_t k = 1; k < length; ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
    return cp;
}

// An ASCII byte; false when it is not one this style writes as it is.
bool append_ascii_escape(std::string& out, unsigned char c, JsonEscape style) {
    switch (c) {
        case '"':
            out += "\\\"";
            return true;
        case '\\':
            out += "\\\\";
            return true;
        case '\n':
            out += "\\n";
            return true;
        case '\r':
            out += "\\r";
            return true;
        case '\t':
            out += "\\t";
            return true;
        default:
            break;
    }
    if (style != JsonEscape::utf8_short_escapes_only) {
        if (c == '\b') return out += "\\b", true;
        if (c == '\f') return out += "\\f", true;
    }
    if (c < 0x20 || (c == 0x7f && style == JsonEscape::ascii)) {
        append_u_escape(out, c);
        return true;
    }
    return false;
}

}  // namespace

bool append_json_string(std::string& out, std::string_view s, JsonEscape style) {
    bool bad = false;
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (!append_ascii_escape(out, c, style)) out += static_cast<char>(c);
            ++i;
            continue;
        }
        const std::size_t length = utf8_sequence_length(s, i);
        if (length == 0) {
            bad = true;
            if (style == JsonEscape::ascii)
                append_u_escape(out, c);
            else
                out += "\xef\xbf\xbd";  // U+FFFD
            ++i;
            continue;
        }
        if (style != JsonEscape::ascii) {
            out.append(s.substr(i, length));
        } else if (const std::uint32_t cp = decode(s, i, length); cp >= 0x10000) {
            append_u_escape(out, 0xd800 + ((cp - 0x10000) >> 10));
            append_u_escape(out, 0xdc00 + ((cp - 0x10000) & 0x3ff));
        } else {
            append_u_escape(out, cp);
        }
        i += length;
    }
    out += '"';
    return bad;
}

std::string json_string(std::string_view s, JsonEscape style) {
    std::string out;
    append_json_string(out, s, style);
    return out;
}

}  // namespace ck::support
