// `ckhost plugins`: every plugin found, loaded or skipped.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "cli/command_line.hpp"
#include "cli/exit_codes.hpp"
#include "cli/suggest.hpp"
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

// `plugins` lists every stage and takes no argument: one that names a stage was meant for
// `ckhost help STAGE`.
[[noreturn]] void refuse_stage_argument(const PluginRegistry& registry, const std::string& stage) {
    const std::vector<std::string> names = registry.names();
    const bool known = std::find(names.begin(), names.end(), stage) != names.end();
    throw ck::usage_error("this command takes no arguments, got '" + stage +
                          "': plugins lists every stage; for one stage's options and examples: "
                          "ckhost help " +
                          (known ? stage : "STAGE" + ckhost::did_you_mean(stage, names)));
}

}  // namespace

int plugins(const Args& args, OptionList* options_out) {
    Common c;
    po::options_description d("plugins options");
    // `ckhost plugins quantize` is taken, so that the mistake can be answered in words.
    std::string stage;
    // The listing shows the kernel variant --isa leaves and the thread count.
    if (list_or_parse(args, d, positional_argument("stage", po::value(&stage), 1), c, plugins_usage,
                      options_out, uses_plugin_dir | uses_isa | uses_threads | uses_json))
        return ok;
    apply_globals(c);
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    if (!stage.empty()) refuse_stage_argument(registry, stage);
    return ckhost::run_plugins(registry, c.json, std::cout, std::cerr);
}

}  // namespace ckhost::commands
