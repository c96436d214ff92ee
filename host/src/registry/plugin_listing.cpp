#include "registry/plugin_listing.hpp"

#include <algorithm>
#include <ostream>

#include <nlohmann/json.hpp>

#include "ck/cpu.hpp"
#include "ck/parallel.hpp"
#include "cli/json_output.hpp"
#include "cli/suggest.hpp"
#include "pipeline/plugin_call.hpp"

using nlohmann::json;

namespace ckhost {

namespace {

// One plugin as --json lists it (docs/json.md); the text listing is printed from the same item,
// so that the two never say different things.
json plugin_item(const PluginEntry& e) {
    json item = {{"name", e.name}, {"path", e.path.string()}, {"loaded", e.loaded}};
    if (!e.loaded) {
        item["skipped"] = e.skip_reason;
        if (e.shadowed) item["shadowed"] = true;
        return item;
    }
    const ck_plugin_descriptor& d = *e.descriptor;
    item["kinds"] = stage_kinds(d.stages);
    item["version"] = d.version ? d.version : "";
    item["abi_version"] = d.abi_version;
    // Bits this ckhost does not know are ignored (a later SDK may define more).
    item["flags"] = {{"concurrent", (d.flags & CK_PLUGIN_FLAG_CONCURRENT) != 0},
                     {"streams", (d.flags & CK_PLUGIN_FLAG_STREAMS) != 0}};
    item["toolchain"] = toolchain_string(d.toolchain);
    item["summary"] = d.summary ? d.summary : "";
    json options = json::array();
    for (std::size_t i = 0; i < d.option_count; ++i) {
        const ck_option_descriptor& o = d.options[i];
        options.push_back({{"name", o.name},
                           {"stages", stage_kinds(o.stages)},
                           {"default", o.default_value ? json(o.default_value) : json()},
                           {"choices", o.choices ? json(split_list(o.choices, '|')) : json()},
                           {"help", o.help ? o.help : ""}});
    }
    item["options"] = options;
    if (d.kernel_variant)
        item["kernel_variant"] =
            call_plugin(e.name, [&] { return std::string(d.kernel_variant()); });
    return item;
}

// A plugin_item() for people: a line of facts, the summary, the path, a line per option.
void print_plugin_item(const json& item, std::ostream& out) {
    out << item["name"].get<std::string>();
    if (!item["loaded"].get<bool>()) {
        out << "  SKIPPED: " << item["skipped"].get<std::string>() << "\n    "
            << item["path"].get<std::string>() << "\n";
        return;
    }
    out << "  (" << join(item["kinds"].get<std::vector<std::string>>()) << ")  version "
        << item["version"].get<std::string>() << "  ABI " << item["abi_version"].get<unsigned>();
    if (item.contains("kernel_variant"))
        out << "  kernels: " << item["kernel_variant"].get<std::string>();
    out << "  concurrent: " << (item["flags"]["concurrent"].get<bool>() ? "yes" : "no");
    // A writer that can write to standard output (-o -) says so.
    if (item["flags"]["streams"].get<bool>()) out << "  streams: yes";
    out << "\n    " << item["summary"].get<std::string>() << "\n    "
        << item["path"].get<std::string>() << "\n";
    for (const auto& o : item["options"]) {
        out << "    option " << o["name"].get<std::string>();
        if (!o["choices"].is_null())
            out << "=" << join(o["choices"].get<std::vector<std::string>>(), "|");
        if (!o["default"].is_null()) out << " (default " << o["default"].get<std::string>() << ")";
        out << " [" << join(o["stages"].get<std::vector<std::string>>())
            << "]: " << o["help"].get<std::string>() << "\n";
    }
}

}  // namespace

int run_plugins(PluginRegistry& registry, bool as_json, std::ostream& out, std::ostream& err) {
    registry.load_all();
    json list = json::array();
    for (const auto& e : registry.entries()) list.push_back(plugin_item(e));
    json search = json::array();
    for (const auto& dir : registry.search_path()) search.push_back(dir.string());

    if (as_json) {
        json doc = json_document("plugins");
        doc.update(json{
            {"search_path", search},
            {"toolchain", toolchain_string(host_toolchain())},
            {"cpu_best_isa", std::string(ck::isa_name(ck::best_supported_isa(ck::cpu_features())))},
            {"threads", ck::thread_count()},
            {"available_cpus", ck::available_cpus()},
            {"plugins", list},
            {"warnings", registry.warnings()}});
        print_json(out, doc);
        return 0;
    }
    for (const auto& w : registry.warnings()) err << "warning: " << w << "\n";
    out << "search path:";
    for (const auto& dir : search) out << " " << dir.get<std::string>();
    out << "\ntoolchain: " << toolchain_string(host_toolchain())
        << " (plugins must be built with the same)";
    out << "\ncpu: best kernel variant " << ck::isa_name(ck::best_supported_isa(ck::cpu_features()))
        << "; threads " << ck::thread_count() << " (" << ck::available_cpus()
        << " CPUs available to this process)\n";
    for (const auto& item : list) print_plugin_item(item, out);
    return 0;
}

}  // namespace ckhost
