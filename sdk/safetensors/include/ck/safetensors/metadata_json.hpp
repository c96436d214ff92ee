// GGUF metadata values as the JSON texts stored in safetensors' __metadata__ (string -> string).
//
// A value is written as plain JSON (numbers, strings, booleans, arrays of them) so any tool can
// read it; its GGUF type goes into one "ckhost.gguf_types" entry so ckhost can give it back
// exactly: "u32", "f32", "str", "arr[str]" ... Floats are written in the shortest form that
// reads back to the same bits; NaN and infinities, which JSON lacks, as a string of their bits
// ("0x7fc00000").
#pragma once

#include <string>
#include <string_view>

#include "ck/metadata.hpp"

namespace ck::safetensors {
using namespace ck;

// "u32", "str", "arr[f32]".
std::string type_label(const Value& value);

// The JSON text of a value. Strings that are not valid UTF-8 (JSON cannot hold them) get their
// bad bytes replaced by U+FFFD and `replaced` is set.
std::string to_json_text(const Value& value, bool& replaced);

// The value of a JSON text written as type `label`; with an empty label the type is inferred
// (another tool's file): strings, booleans, u32/u64 for non-negative integers, i32/i64 for
// negative ones, f32 for other numbers, and arrays of one of those. Throws std::runtime_error
// saying what does not fit.
Value from_json_text(std::string_view text, std::string_view label);

}  // namespace ck::safetensors
