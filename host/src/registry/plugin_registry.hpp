// Finds plugin libraries, loads them with Boost.DLL, and checks each descriptor's ABI version,
// size and toolchain fingerprint before any C++ type of the plugin is touched. Libraries stay
// loaded until exit: objects a plugin created must never outlive its code.
#pragma once

#include <boost/dll/shared_library.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ck/plugin.hpp"

namespace ckhost {

struct PluginEntry {
    std::string name;  // the library's base name
    std::filesystem::path path;
    bool loaded = false;
    std::string skip_reason;  // why it could not be used (empty when loaded or not tried yet)
    bool shadowed = false;    // another plugin of the same name comes first: never loaded
    const ck_plugin_descriptor* descriptor = nullptr;
    std::shared_ptr<boost::dll::shared_library> library;
};

class PluginRegistry {
  public:
    // Search order: explicit dirs, then CKHOST_PLUGIN_PATH, then the directory next to the
    // executable where the build and the install put the plugins.
    explicit PluginRegistry(const std::vector<std::filesystem::path>& explicit_dirs);

    const std::vector<std::filesystem::path>& search_path() const { return dirs_; }
    // Every plugin file found, in search order; files whose name an earlier one already took
    // are listed as shadowed (skipped, never loaded).
    const std::vector<PluginEntry>& entries() const { return entries_; }
    // Warnings about shadowed duplicates and the like.
    const std::vector<std::string>& warnings() const { return warnings_; }

    // The loaded plugin called `name`; throws ck::Error (usage when unknown, plugin when it
    // cannot be loaded) with the available names.
    const PluginEntry& get(const std::string& name);
    void load_all();
    std::vector<std::string> names() const;
    std::vector<std::string> names_with(std::uint32_t stage_kind);

    static std::filesystem::path default_plugin_dir();

  private:
    void load(PluginEntry& entry);
    std::vector<std::filesystem::path> dirs_;
    std::vector<PluginEntry> entries_;
    std::vector<std::string> warnings_;
};

// ["reader", "writer"], and the same joined: "reader, writer".
std::vector<std::string> stage_kinds(std::uint32_t stages);
std::string stage_kinds_string(std::uint32_t stages);

// The size of a version-2 descriptor: the end of the last field this host reads. A plugin whose
// struct_size is smaller is skipped; a larger one (later headers appended fields) is fine.
inline constexpr std::size_t descriptor_v2_size =
    offsetof(ck_plugin_descriptor, kernel_variant) + sizeof(ck_plugin_descriptor::kernel_variant);

// The toolchain ckhost itself was compiled with; plugins must match it exactly.
const ck_plugin_toolchain& host_toolchain();
bool same_toolchain(const ck_plugin_toolchain& a, const ck_plugin_toolchain& b);
// "GCC 12 / libstdc++ cxx11 ABI", "Clang 17 / libc++ ABI v1".
std::string toolchain_string(const ck_plugin_toolchain& t);

}  // namespace ckhost
