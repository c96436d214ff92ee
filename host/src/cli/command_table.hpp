// The one table of commands: dispatch, `ckhost help`, the usage text and completion all read it,
// so adding a command is a file in commands/ and a row here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "commands/commands.hpp"

namespace ckhost::cli {

struct Command {
    std::string_view name;
    std::string_view synopsis;  // the usage line after "ckhost "
    int (*run)(const commands::Args& args, commands::OptionList* options_out);
};

const std::vector<Command>& command_table();
// The table's names and "help".
std::vector<std::string> command_names();
// The general usage: every command's synopsis, examples, global options, exit codes.
std::string main_usage();

}  // namespace ckhost::cli
