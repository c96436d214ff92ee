// `ckhost completion bash|zsh`: a completion script generated from the command line's own
// option tables and from the plugin registry (stages, their options and choices), so that it
// never lists a stage or an option ckhost does not have.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "registry/plugin_registry.hpp"

namespace ckhost {

struct CompletionCommand {
    std::string name;
    std::vector<std::string> options;  // as typed: --json, -q
};

// Writes the script for `shell` ("bash" or "zsh"). The plugins are those `registry` finds now;
// the installed scripts are generated at build time from the built-in plugins.
void write_completion(const std::string& shell, const std::vector<CompletionCommand>& commands,
                      PluginRegistry& registry, std::ostream& out);

}  // namespace ckhost
