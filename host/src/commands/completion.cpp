// `ckhost completion bash|zsh`: a completion script from the command table and the plugins found.
#include <iostream>

#include "ck/error.hpp"
#include "cli/command_line.hpp"
#include "cli/command_table.hpp"
#include "cli/completion_script.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* completion_usage =
    "usage: ckhost completion bash|zsh\n\nPrints a completion script for the "
    "shell: commands, options, and the stages\nand stage options of the plugins "
    "found now (installed ones: share/bash-completion,\nshare/zsh/site-functions).\n\n"
    "examples:\n"
    "  source <(ckhost completion bash)\n"
    "  ckhost completion zsh > ~/.zfunc/_ckhost\n\n";

}  // namespace

int completion(const Args& args, OptionList* options_out) {
    Common c;
    std::string shell;
    po::options_description d("completion options");
    // The script names the stages of the plugins found.
    if (list_or_parse(args, d, positional_argument("shell", po::value(&shell), 1), c,
                      completion_usage, options_out, uses_plugin_dir))
        return ok;
    if (shell != "bash" && shell != "zsh")
        throw ck::usage_error(shell.empty() ? "missing SHELL (bash or zsh)"
                                            : "completion " + shell + ": expected bash or zsh");
    apply_globals(c);
    std::vector<ckhost::CompletionCommand> commands;
    for (const Command& row : command_table()) {
        ckhost::CompletionCommand command{std::string(row.name), {}};
        row.run({}, &command.options);
        commands.push_back(std::move(command));
    }
    commands.push_back({"help", {}});
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    ckhost::write_completion(shell, commands, registry, std::cout);
    return ok;
}

}  // namespace ckhost::commands
