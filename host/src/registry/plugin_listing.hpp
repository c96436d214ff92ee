#pragma once

#include <iosfwd>

#include "registry/plugin_registry.hpp"

namespace ckhost {

// `ckhost plugins`: every plugin found, loaded or skipped with its reason.
int run_plugins(PluginRegistry& registry, bool json, std::ostream& out, std::ostream& err);

}  // namespace ckhost
