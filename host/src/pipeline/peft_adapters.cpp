#include "pipeline/peft_adapters.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "ck/error.hpp"
#include "ck/support/option_list.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_spec.hpp"

namespace ckhost {

namespace fs = std::filesystem;

bool is_peft_adapter(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return fs::is_regular_file(path / "adapter_config.json", ec);
    return path.filename() == "adapter_config.json" && fs::is_regular_file(path, ec);
}

ConvertedAdapters::~ConvertedAdapters() {
    std::error_code ec;
    if (!folder_.empty()) fs::remove_all(folder_, ec);
}

fs::path ConvertedAdapters::convert(PluginRegistry& registry, const fs::path& adapter,
                                    const std::string& base, ck::Context& context) {
    if (folder_.empty()) {
        // A private folder (mkdtemp: mode 0700, a fresh name) for this pipeline's conversions.
        std::string pattern = (fs::temp_directory_path() / "ckhost-lora-XXXXXX").string();
        if (!::mkdtemp(pattern.data()))
            throw ck::Error("cannot create a temporary folder for the converted adapters: " +
                                std::string(std::strerror(errno)),
                            pattern);
        folder_ = pattern;
    }
    // Named after the adapter's folder, which messages about the file then show.
    std::error_code ec;
    std::string name =
        fs::canonical(fs::is_directory(adapter, ec) ? adapter : adapter.parent_path(), ec)
            .filename()
            .string();
    if (name.empty()) name = "adapter";
    const fs::path out = folder_ / (std::to_string(done_.size()) + "-" + name + ".gguf");
    std::string options = "outtype=f32,peft_scale";
    if (!base.empty()) options += ",base=" + stage_value(base);
    Pipeline conversion(registry, "hf[" + options + "]:gguf");
    conversion.plan(adapter, out);
    ConvertSettings settings;
    settings.input = adapter;
    settings.output = out;
    settings.sync = false;  // read back at once, removed with the pipeline
    const ConvertResult result = conversion.run(settings);
    for (const std::string& warning : result.warnings)
        context.warn("lora: " + adapter.string() + ": " + warning);
    return out;
}

std::optional<std::map<std::string, std::string>> ConvertedAdapters::rewrite(
    PluginRegistry& registry, const std::map<std::string, std::string>& options,
    const std::optional<fs::path>& checkpoint, ck::Context& context) {
    const auto adapter = options.find("adapter");
    if (adapter == options.end()) return std::nullopt;
    std::vector<std::string> items = ck::support::option_list(adapter->second);
    bool changed = false;
    for (std::string& item : items) {
        if (!is_peft_adapter(item)) continue;
        auto found = done_.find(item);
        if (found == done_.end()) {
            const auto given = options.find("base");
            const std::string base = given != options.end() ? given->second
                                     : checkpoint           ? checkpoint->string()
                                                            : std::string();
            found = done_.emplace(item, convert(registry, item, base, context)).first;
        }
        item = found->second.string();
        changed = true;
    }
    if (!changed) return std::nullopt;
    std::map<std::string, std::string> rewritten = options;
    rewritten["adapter"] = ck::support::option_list_text(items);
    return rewritten;
}

}  // namespace ckhost
