// `ckhost plugins`: every plugin found, loaded or skipped.
#include <iostream>

#include "cli/command_line.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "registry/plugin_listing.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* plugins_usage =
    "usage: ckhost plugins [--json]\n\nLists every plugin found, loaded or "
    "skipped: kinds, version, options\nand their choices, the kernel variant "
    "each selected.\n\n"
    "examples:\n"
    "  ckhost plugins\n"
    "  ckhost --plugin-dir build plugins --json\n\n";

}  // namespace

int plugins(const Args& args, OptionList* options_out) {
    Common c;
    po::options_description d("plugins options");
    if (list_or_parse(args, d, {}, c, plugins_usage, options_out)) return ok;
    apply_globals(c);
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    return ckhost::run_plugins(registry, c.json, std::cout, std::cerr);
}

}  // namespace ckhost::commands
