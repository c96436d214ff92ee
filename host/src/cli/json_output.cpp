#include "cli/json_output.hpp"

#include <array>
#include <ostream>
#include <string_view>

#include "ck/enum_names.hpp"
#include "cli/exit_codes.hpp"

using nlohmann::json;

namespace ckhost {

namespace {

// ck::ErrorKind's names, in its order (input, usage, plugin, interrupt, output).
constexpr std::array<std::string_view, 5> kind_names = {"input", "usage", "plugin", "interrupt",
                                                        "output"};

json or_null(const std::string& s) {
    return s.empty() ? json(nullptr) : json(s);
}

}  // namespace

json json_document(std::string_view command, bool ok) {
    return {{"schema", json_schema_version}, {"command", std::string(command)}, {"ok", ok}};
}

json error_json(const ck::Error& error) {
    return {{"message", error.message()},
            {"text", error.what()},
            {"file", or_null(error.file())},
            {"offset", error.offset() ? json(*error.offset()) : json(nullptr)},
            {"subject", or_null(error.subject())},
            {"kind", std::string(ck::enum_name(kind_names, error.kind(), "input"))},
            {"exit_code", exit_code_for(error.kind())}};
}

json error_document(std::string_view command, const ck::Error& error) {
    json doc = json_document(command, false);
    doc["error"] = error_json(error);
    return doc;
}

void print_json(std::ostream& out, const json& document) {
    out << document.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace ckhost
