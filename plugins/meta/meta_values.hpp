// set's `TYPE:VALUE`, parsed strictly: integers in decimal and within their type's range,
// floats as C++'s from_chars reads them (no overflow to infinity), bools as `true`/`false`,
// strings as given (valid UTF-8), and arrays of fixed-size elements as `arr:TYPE:V V V`.
#pragma once

#include <string_view>

#include "ck/metadata.hpp"

namespace ckplugin::meta {
using namespace ck;

// The value of `set=KEY=TYPE:VALUE` for `key`; a usage error naming the key when the type is
// unknown or the value is not one of that type.
Value parse_typed_value(std::string_view typed, std::string_view key);

// Whether `text` starts with a type (`str:`, `u32:`, `arr:`...): `set=KEY=TEXT` then gives the
// type itself; otherwise the whole of TEXT is the value, of the key's known type.
bool names_its_type(std::string_view text);

// `text` as a value of `type` (a scalar type or str) for `key`; the same refusals as
// parse_typed_value.
Value parse_value_as(ValueType type, std::string_view text, std::string_view key);

}  // namespace ckplugin::meta
