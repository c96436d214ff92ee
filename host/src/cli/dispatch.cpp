#include "cli/dispatch.hpp"

#include <algorithm>
#include <iostream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ck/support/shell_quote.hpp"
#include "cli/command_line.hpp"
#include "cli/command_table.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "cli/suggest.hpp"
#include "pipeline/conversion_error.hpp"

namespace ckhost::cli {
namespace {

// The command this run is for, named in --json error documents ("convert" for the form
// without a command name).
std::string current_command = "convert";

// `ckhost help --json`: the commands and their usage lines (docs/schema/help.schema.json).
nlohmann::json help_document() {
    nlohmann::json doc = json_document("help");
    nlohmann::json commands = nlohmann::json::array();
    for (const Command& command : command_table())
        commands.push_back(
            {{"name", std::string(command.name)}, {"synopsis", std::string(command.synopsis)}});
    commands.push_back({{"name", "help"}, {"synopsis", "help [COMMAND|STAGE]"}});
    doc["commands"] = commands;
    return doc;
}

}  // namespace

int dispatch(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << main_usage();
        return usage;
    }
    // Global options may come before the command: `ckhost --plugin-dir d plugins`. They are
    // handed to the command in front of its own arguments, so `--plugin-dir` before and after
    // the command adds directories in the order given.
    const Split split = split_at_command({argv + 1, argv + argc});
    const std::string first = split.rest.empty() ? std::string() : split.rest.front();
    const auto& table = command_table();
    const auto find = [&](const std::string& name) {
        return std::find_if(table.begin(), table.end(),
                            [&](const Command& row) { return row.name == name; });
    };
    if (first == "help" || first == "--help" || first == "-h") {
        // `ckhost help convert`: that command's own help, as `ckhost convert --help`; `ckhost
        // help bump`: the stage's options and examples (commands/help.cpp).
        if (first == "help" && split.rest.size() > 1 && split.rest[1] != "help" &&
            !split.rest[1].starts_with("-")) {
            const std::string& topic = split.rest[1];
            current_command = find(topic) != table.end() ? topic : "help";
            std::vector<std::string> args = split.globals;
            args.insert(args.end(), split.rest.begin() + 2, split.rest.end());
            return commands::help_topic(topic, args);
        }
        current_command = "help";
        // The command `help` answers --json as every command does; the option --help is the
        // text for people, whatever else is given (as `inspect --json --help`).
        if (first == "help" && json_requested(argc, argv))
            print_json(std::cout, help_document());
        else
            std::cout << main_usage();
        return ok;
    }
    if (first == "--version") {
        std::cout << "ckhost " << CKHOST_VERSION << "\n";
        return ok;
    }
    if (const auto command = find(first); command != table.end()) {
        current_command = first;
        std::vector<std::string> args = split.globals;
        args.insert(args.end(), split.rest.begin() + 1, split.rest.end());
        return command->run(args, nullptr);
    }
    // No command: the convert options straight away (`ckhost --pipeline P -i IN -o OUT`).
    if (first.empty() || first[0] == '-')
        return commands::convert({argv + 1, argv + argc}, nullptr);
    throw ck::usage_error("unknown command '" + first + "'" +
                          ckhost::did_you_mean(first, command_names()) +
                          " (commands: " + ckhost::join(command_names()) + ")");
}

// Whether --json was given anywhere: a usage error found before the command parsed its
// options still owes a script its error document.
bool json_requested(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") break;
        if (arg == "--json") return true;
    }
    return false;
}

// The error on stderr, and with --json as a document on stdout; the exit code for it.
int report_error(const ck::Error& e, bool as_json) {
    std::cerr << "ckhost: error: " << e.what() << "\n";
    // A failed conversion may know a pipeline that plans where this one failed (and the
    // warnings that explain the failure, already printed by convert_command).
    const auto* failed = dynamic_cast<const ckhost::ConversionError*>(&e);
    if (failed && !failed->suggestion().empty())
        std::cerr << "ckhost: suggestion: --pipeline "
                  << ck::support::shell_quote(failed->suggestion())
                  << " (it plans on the same input and output)\n";
    if (as_json) {
        nlohmann::json doc = ckhost::error_document(current_command, e);
        if (failed) {
            doc["error"]["warnings"] = failed->warnings();
            doc["error"]["suggestion"] = failed->suggestion().empty()
                                             ? nlohmann::json(nullptr)
                                             : nlohmann::json(failed->suggestion());
        }
        ckhost::print_json(std::cout, doc);
    }
    return ckhost::exit_code_for(e.kind());
}

}  // namespace ckhost::cli
