#include "registry/plugin_registry.hpp"

#include <boost/dll/runtime_symbol_info.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "ck/error.hpp"
#include "cli/suggest.hpp"

namespace fs = std::filesystem;

namespace ckhost {
namespace {

void add_dirs_from_env(std::vector<fs::path>& dirs) {
    const char* env = std::getenv("CKHOST_PLUGIN_PATH");
    if (!env) return;
    std::string s = env;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t colon = s.find(':', start);
        if (colon == std::string::npos) colon = s.size();
        if (colon > start) dirs.emplace_back(s.substr(start, colon - start));
        start = colon + 1;
    }
}

// Why the dynamic loader refused a library: dlopen's own words (not an ELF file, file too short,
// a missing symbol or library, another architecture), without the path it repeats in front.
// Boost.DLL's error code says only "Bad file descriptor" whatever the cause.
std::string not_loadable_reason(const fs::path& path, const std::string& fallback) {
    std::string why = fallback;
    if (const char* said = ::dlerror()) {
        why = said;
        const std::string prefix = path.string() + ": ";
        if (why.starts_with(prefix)) why.erase(0, prefix.size());
    }
    return "cannot be loaded: it is not a loadable plugin library (the dynamic loader says: " +
           why + ")";
}

}  // namespace

const ck_plugin_toolchain& host_toolchain() {
    static constexpr ck_plugin_toolchain host = CK_PLUGIN_TOOLCHAIN;
    return host;
}

bool same_toolchain(const ck_plugin_toolchain& a, const ck_plugin_toolchain& b) {
    return a.stdlib == b.stdlib && a.stdlib_abi == b.stdlib_abi && a.compiler == b.compiler &&
           a.compiler_major == b.compiler_major;
}

std::string toolchain_string(const ck_plugin_toolchain& t) {
    std::string out;
    switch (t.compiler) {
        case CK_TOOLCHAIN_COMPILER_GCC:
            out = "GCC ";
            break;
        case CK_TOOLCHAIN_COMPILER_CLANG:
            out = "Clang ";
            break;
        default:
            out = "compiler #" + std::to_string(t.compiler) + " version ";
            break;
    }
    out += std::to_string(t.compiler_major) + " / ";
    switch (t.stdlib) {
        case CK_TOOLCHAIN_STDLIB_LIBSTDCXX:
            out += t.stdlib_abi ? "libstdc++ cxx11 ABI" : "libstdc++ old (pre-C++11) ABI";
            break;
        case CK_TOOLCHAIN_STDLIB_LIBCXX:
            out += "libc++ ABI v" + std::to_string(t.stdlib_abi);
            break;
        default:
            out += "standard library #" + std::to_string(t.stdlib) + " ABI " +
                   std::to_string(t.stdlib_abi);
            break;
    }
    return out;
}

std::vector<std::string> stage_kinds(std::uint32_t stages) {
    std::vector<std::string> kinds;
    if (stages & CK_STAGE_READER) kinds.push_back("reader");
    if (stages & CK_STAGE_TRANSFORM) kinds.push_back("transform");
    if (stages & CK_STAGE_WRITER) kinds.push_back("writer");
    return kinds;
}

std::string stage_kinds_string(std::uint32_t stages) {
    return join(stage_kinds(stages), ", ");
}

fs::path PluginRegistry::default_plugin_dir() {
    // bin/ckhost -> lib/ckhost/plugins, in the build tree and the install tree alike.
    fs::path exe = boost::dll::program_location().string();
    return exe.parent_path().parent_path() / CKHOST_PLUGIN_SUBDIR;
}

PluginRegistry::PluginRegistry(const std::vector<fs::path>& explicit_dirs) : dirs_(explicit_dirs) {
    add_dirs_from_env(dirs_);
    dirs_.push_back(default_plugin_dir());

    for (const auto& dir : dirs_) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) continue;
        std::vector<fs::path> files;
        for (const auto& item : fs::directory_iterator(dir, ec))
            if (item.path().extension() == ".so") files.push_back(item.path());
        std::sort(files.begin(), files.end());
        for (const auto& file : files) {
            std::string name = file.stem().string();
            auto same = std::find_if(entries_.begin(), entries_.end(), [&](const PluginEntry& e) {
                return e.name == name && !e.shadowed;
            });
            PluginEntry entry;
            if (same != entries_.end()) {
                // The same file reached twice (a directory listed twice, a symlink) is no conflict.
                if (fs::equivalent(same->path, file, ec)) continue;
                warnings_.push_back("plugin '" + name + "' found twice: using " +
                                    same->path.string() + ", ignoring " + file.string());
                entry.shadowed = true;
                entry.skip_reason = "another plugin named '" + name +
                                    "' comes first in the search path: " + same->path.string();
            }
            entry.name = name;
            entry.path = file;
            entries_.push_back(std::move(entry));
        }
    }
}

void PluginRegistry::load(PluginEntry& entry) {
    if (entry.loaded || !entry.skip_reason.empty()) return;
    auto library = std::make_shared<boost::dll::shared_library>();
    boost::dll::fs::error_code ec;
    library->load(entry.path.string(), boost::dll::load_mode::default_mode, ec);
    if (ec) {
        entry.skip_reason = not_loadable_reason(entry.path, ec.message());
        return;
    }
    if (!library->has(CK_PLUGIN_DESCRIPTOR_SYMBOL)) {
        entry.skip_reason = "not a ckhost plugin: it exports no " CK_PLUGIN_DESCRIPTOR_SYMBOL;
        return;
    }
    auto describe = library->get<const ck_plugin_descriptor*()>(CK_PLUGIN_DESCRIPTOR_SYMBOL);
    const ck_plugin_descriptor* d = describe();
    if (!d) {
        entry.skip_reason = "its descriptor function returned no descriptor";
        return;
    }
    // Each field is read only once the checks before it passed: the version first (the only
    // field every ABI version has), then the size (which fields exist), then the toolchain.
    if (d->abi_version != CK_PLUGIN_ABI_VERSION) {
        entry.skip_reason = "built for plugin ABI version " + std::to_string(d->abi_version) +
                            ", this ckhost needs " + std::to_string(CK_PLUGIN_ABI_VERSION) +
                            "; rebuild it against this SDK";
        return;
    }
    if (d->struct_size < descriptor_v2_size) {
        entry.skip_reason = "its descriptor is " + std::to_string(d->struct_size) +
                            " bytes, this ckhost reads " + std::to_string(descriptor_v2_size) +
                            "; rebuild it against this SDK";
        return;
    }
    if (!same_toolchain(d->toolchain, host_toolchain())) {
        entry.skip_reason = "built with " + toolchain_string(d->toolchain) + ", ckhost with " +
                            toolchain_string(host_toolchain()) +
                            "; rebuild it with the same compiler and standard library";
        return;
    }
    if (!d->name || entry.name != d->name) {
        entry.skip_reason = std::string("declares the name '") + (d->name ? d->name : "") +
                            "' but its file is named '" + entry.name + "'";
        return;
    }
    entry.descriptor = d;
    entry.library = std::move(library);
    entry.loaded = true;
}

const PluginEntry& PluginRegistry::get(const std::string& name) {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const PluginEntry& e) { return e.name == name && !e.shadowed; });
    if (it == entries_.end()) {
        auto all = names();
        throw ck::usage_error("unknown stage '" + name + "'" + did_you_mean(name, all) +
                              " (available: " + (all.empty() ? "none found" : join(all)) + ")");
    }
    load(*it);
    if (!it->loaded)
        throw ck::plugin_bug("plugin '" + name + "' " + it->skip_reason, it->path.string());
    return *it;
}

void PluginRegistry::load_all() {
    for (auto& e : entries_) load(e);
}

std::vector<std::string> PluginRegistry::names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_)
        if (!e.shadowed) out.push_back(e.name);
    return out;
}

std::vector<std::string> PluginRegistry::names_with(std::uint32_t stage_kind) {
    std::vector<std::string> out;
    for (auto& e : entries_) {
        load(e);
        if (e.loaded && (e.descriptor->stages & stage_kind)) out.push_back(e.name);
    }
    return out;
}

}  // namespace ckhost
