// The --json contract (docs/json.md): every document ckhost prints has "schema" (the version of
// the contract, docs/schema/*.schema.json), "command" and "ok"; a failure is an error document
// on stdout with the same exit code as without --json.
#pragma once

#include <iosfwd>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"

namespace ckhost {

// Raised when a field's type or meaning changes or one is removed; adding fields keeps it.
inline constexpr int json_schema_version = 1;

// {"schema": 1, "command": command, "ok": ok}, to which a command adds its fields.
nlohmann::json json_document(std::string_view command, bool ok = true);

// {"message", "text" (the line stderr shows), "file", "offset", "subject", "kind",
// "exit_code"}; absent parts are null.
nlohmann::json error_json(const ck::Error& error);

// A failure as a whole document: json_document(command, false) plus "error".
nlohmann::json error_document(std::string_view command, const ck::Error& error);

// One document, indented by one space, invalid UTF-8 replaced (file names, metadata), and a
// newline.
void print_json(std::ostream& out, const nlohmann::json& document);

}  // namespace ckhost
