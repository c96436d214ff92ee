// Calls into a plugin. Only ck::Error may cross the boundary; anything else a plugin throws is
// turned into one here, naming the plugin, so the host never dies on a foreign exception.
#pragma once

#include <exception>
#include <string>

#include "ck/error.hpp"

namespace ckhost {

template <class Fn>
auto call_plugin(const std::string& plugin, Fn&& fn) -> decltype(fn()) {
    try {
        return fn();
    } catch (const ck::Error&) {
        throw;
    } catch (const std::exception& e) {
        throw ck::Error("plugin '" + plugin + "' failed: " + e.what());
    } catch (...) {
        throw ck::Error("plugin '" + plugin + "' failed with an unknown exception");
    }
}

}  // namespace ckhost
