// The small part of JSON GGUF-lite metadata lines use: strings, numbers, true/false and flat
// arrays. Written by hand rather than with a JSON library because the reader needs the exact
// text of every number (an f32 must read back to the same bits, a u64 must not pass through a
// double) and the byte offset of every error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ck/utf8.hpp"

namespace ckplugin::gguflite {
using namespace ck;

// Appends `s` (valid UTF-8) as a JSON string: quotes, backslashes and control characters
// escaped, everything else as it is.
void append_json_string(std::string& out, std::string_view s);

// Appends an f32 / f64 given by its bits in the shortest form that reads back to the same
// value; NaN, inf and -inf as the JSON strings "nan", "inf", "-inf".
void append_json_f32(std::string& out, std::uint32_t bits);
void append_json_f64(std::string& out, std::uint64_t bits);

// Reads JSON tokens from one metadata line. Failures are reported as a position in the line
// and a message; the caller turns them into a ck::Error with the file offset.
class JsonCursor {
  public:
    explicit JsonCursor(std::string_view text, std::size_t pos = 0) : text_(text), pos_(pos) {}

    std::size_t pos() const noexcept { return pos_; }
    bool at_end() const noexcept { return pos_ >= text_.size(); }
    char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }
    void skip_space() noexcept;
    // Consumes `c` when it is next; false otherwise.
    bool accept(char c) noexcept;

    // Each returns false (with error() set, the position at the problem) when the next token is
    // not what it reads.
    bool read_string(std::string& out);
    // A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? ; `integral` tells whether it
    // has neither fraction nor exponent.
    bool read_number(std::string_view& token, bool& integral);
    bool read_bool(bool& out);

    const std::string& error() const noexcept { return error_; }
    std::size_t error_pos() const noexcept { return error_pos_; }
    bool fail(std::string message, std::size_t at);

  private:
    bool read_hex4(std::uint32_t& out);

    std::string_view text_;
    std::size_t pos_;
    std::string error_;
    std::size_t error_pos_ = 0;
};

}  // namespace ckplugin::gguflite
