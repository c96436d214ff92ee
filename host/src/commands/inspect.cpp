// `ckhost inspect` and `ckhost verify`: one file, or several one after the other.
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "cli/command_line.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "commands/commands.hpp"
#include "inspect/inspect.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

// The files of `inspect` or `verify`, one after the other. One file is one document (--json)
// whose failure is main()'s error document; several are {"files": [...]}, one document each
// (an error document for a file that failed), and the exit status is the first failure's.
namespace {

int inspect_files(const std::vector<std::string>& files, bool as_json, const char* command,
                  const std::function<int(const std::string&, std::ostream&)>& run) {
    if (files.size() == 1) return run(files.front(), std::cout);
    int status = ok;
    nlohmann::json docs = nlohmann::json::array();
    for (std::size_t i = 0; i < files.size(); ++i) {
        std::ostringstream text;
        int code = ok;
        std::optional<ck::Error> failure;
        try {
            code = run(files[i], text);
            if (as_json) docs.push_back(nlohmann::json::parse(text.str()));
        } catch (const ck::Error& e) {
            if (e.kind() == ck::ErrorKind::interrupt) throw;
            failure = e.file().empty() ? e.with_file(files[i]) : e;
            if (as_json) docs.push_back(ckhost::error_document(command, *failure));
            code = ckhost::exit_code_for(e.kind());
        }
        // inspect's reports are separated by a blank line; verify's are one line each. What a
        // damaged file let inspect read comes before its error, as for one file.
        const bool blank = i > 0 && !text.str().empty() && std::string_view(command) == "inspect";
        if (!as_json) std::cout << (blank ? "\n" : "") << text.str() << std::flush;
        if (failure) std::cerr << "ckhost: error: " << failure->what() << "\n";
        if (status == ok) status = code;
    }
    if (as_json) {
        nlohmann::json doc = ckhost::json_document(command, status == ok);
        doc["files"] = docs;
        ckhost::print_json(std::cout, doc);
    }
    return status;
}

constexpr const char* verify_usage =
    "usage: ckhost verify FILE... [--data] [--json]\n\nRe-checks each "
    "file's integrity; --data also checks every value. Exit 0 only\n"
    "when every file is sound.\n\n"
    "examples:\n"
    "  ckhost verify out/weights.bump\n"
    "  ckhost verify --data *.gguf\n\n";

constexpr const char* inspect_usage =
    "usage: ckhost inspect FILE... [--json] [--tensors] [--kv KEY]...\n\n"
    "Shows each file's header, metadata, tensor table and bytes per "
    "dtype; --kv prints\nthe named values in full.\n\n"
    "examples:\n"
    "  ckhost inspect model.gguf --tensors\n"
    "  ckhost inspect *.gguf --json\n"
    "  ckhost inspect model.gguf --kv general.name --kv "
    "tokenizer.ggml.tokens\n\n";

int inspect_or_verify(const Args& args, bool verify, OptionList* options_out) {
    Common c;
    ckhost::InspectSettings settings;
    std::vector<std::string> files;
    po::options_description d(verify ? "verify options" : "inspect options");
    bool data = false;
    if (!verify)
        d.add_options()("tensors,t", po::bool_switch(&settings.tensors), "list every tensor")(
            "kv", po::value(&settings.keys)->composing(),
            "print one metadata value in full (repeatable)");
    else
        d.add_options()("data", po::bool_switch(&data),
                        "also read every tensor's data: NaN or infinite floats and block scales "
                        "(llama.cpp's --check-tensors)");
    // Both only read: the plugins read the files, --json shapes the report.
    if (list_or_parse(args, d, positional_argument("file", po::value(&files), -1), c,
                      verify ? verify_usage : inspect_usage, options_out,
                      uses_plugin_dir | uses_json))
        return ok;
    if (files.empty()) throw ck::usage_error("missing FILE");
    for (const auto& file : files)
        if (file == "-")
            throw ck::usage_error(std::string(verify ? "verify" : "inspect") +
                                  " -: standard input is not supported here; give a file path "
                                  "(./- for a file named '-')");
    apply_globals(c);
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    settings.json = c.json;
    return inspect_files(files, c.json, verify ? "verify" : "inspect",
                         [&](const std::string& file, std::ostream& out) {
                             if (verify)
                                 return ckhost::run_verify(registry, file, c.json, data, out,
                                                           std::cerr);
                             settings.file = file;
                             // Values alone do not say whose they are: with several files each gets
                             // its name.
                             if (!c.json && !settings.keys.empty() && files.size() > 1)
                                 out << file << ":\n";
                             return ckhost::run_inspect(registry, settings, out, std::cerr);
                         });
}
}  // namespace

int inspect(const Args& args, OptionList* options_out) {
    return inspect_or_verify(args, false, options_out);
}

int verify(const Args& args, OptionList* options_out) {
    return inspect_or_verify(args, true, options_out);
}

}  // namespace ckhost::commands
