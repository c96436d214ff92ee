// A pipeline's stages, built from its text: each plugin found, its options checked, its stage
// object created.
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_stages.hpp"

#include <boost/algorithm/string/predicate.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <ostream>
#include <set>
#include <string_view>

#include "ck/conventions/ckhost_keys.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/mapped_file.hpp"
#include "ck/parallel.hpp"
#include "cli/suggest.hpp"
#include "io/checksum.hpp"
#include "pipeline/conversion_error.hpp"
#include "pipeline/memory_budget.hpp"
#include "pipeline/peft_adapters.hpp"
#include "pipeline/plugin_call.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/recipe.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {

namespace {

// An unknown "option" written bare after a comma is most often the rest of the value before it
// (`set=general.name=str:Llama 3, tuned`): say how a comma stays in a value.
std::string comma_hint(const StageSpec& spec, const std::string& key) {
    const std::size_t at = spec.text.find("," + key);
    if (at == std::string::npos) return {};
    const std::size_t after = at + 1 + key.size();
    if (after < spec.text.size() && spec.text[after] == '=') return {};
    return "; if '," + key + "' belongs to the value before it, write its comma as '\\,'";
}

// Unknown names and values outside a declared list of choices are usage errors, found before
// any plugin code runs.
ck::Options checked_options(const PluginEntry& plugin, const StageSpec& spec, std::uint32_t kind) {
    const ck_plugin_descriptor& d = *plugin.descriptor;
    // A choice given in another case (`to=Q4_K`) is the choice, handed to the plugin as the
    // descriptor spells it: plugins compare values exactly.
    std::map<std::string, std::string> canonical = spec.options;
    std::vector<std::string> known;
    for (std::size_t i = 0; i < d.option_count; ++i)
        if (d.options[i].stages & kind) known.push_back(d.options[i].name);
    for (const auto& [key, value] : spec.options) {
        const ck_option_descriptor* found = nullptr;
        for (std::size_t i = 0; i < d.option_count; ++i)
            if ((d.options[i].stages & kind) && key == d.options[i].name) found = &d.options[i];
        if (!found)
            throw ck::usage_error("stage '" + spec.text + "': unknown option '" + key +
                                  "' for the " + kind_word(kind) + " '" + spec.name + "'" +
                                  did_you_mean(key, known) +
                                  " (options: " + (known.empty() ? "none" : join(known)) + ")" +
                                  comma_hint(spec, key));
        if (found->choices) {
            std::string choices = found->choices;
            std::vector<std::string> allowed;
            std::size_t start = 0;
            while (start <= choices.size()) {
                std::size_t bar = choices.find('|', start);
                if (bar == std::string::npos) bar = choices.size();
                allowed.push_back(choices.substr(start, bar - start));
                start = bar + 1;
            }
            // A named copy: Clang 14 cannot capture a structured binding in a lambda.
            const std::string& given = value;
            const auto same = std::find_if(allowed.begin(), allowed.end(), [&](const auto& a) {
                return boost::algorithm::iequals(a, given);
            });
            if (same != allowed.end()) {
                canonical[key] = *same;
                continue;
            }
            throw ck::usage_error("stage '" + spec.text + "': bad value '" + value +
                                  "' for option '" + key + "'" + did_you_mean(value, allowed) +
                                  " (choices: " + join(allowed, "|") + ")");
        }
    }
    return ck::Options(canonical);
}

std::string position_word(std::size_t i, std::size_t n) {
    if (i == 0) return "first";
    if (i + 1 == n) return "last";
    return "middle";
}

}  // namespace

Pipeline::Pipeline(PluginRegistry& registry, const std::string& text)
    : registry_(registry), text_(text) {
    auto specs = parse_pipeline(text);
    if (specs.size() < 2)
        throw ck::usage_error(
            "pipeline '" + text +
            "' needs at least a reader and a writer: reader[:transform...]:writer");
    for (std::size_t i = 0; i < specs.size(); ++i) {
        auto stage = std::make_unique<Stage>();
        stage->spec = specs[i];
        stage->kind = i == 0                  ? CK_STAGE_READER
                      : i + 1 == specs.size() ? CK_STAGE_WRITER
                                              : CK_STAGE_TRANSFORM;
        stage->plugin = &registry.get(stage->spec.name);
        const ck_plugin_descriptor& d = *stage->plugin->descriptor;
        if (!(d.stages & stage->kind)) {
            auto fitting = registry.names_with(stage->kind);
            throw ck::usage_error("stage '" + stage->spec.name + "' cannot be the " +
                                  position_word(i, specs.size()) + " stage: it is a " +
                                  stage_kinds_string(d.stages) + ", not a " +
                                  kind_word(stage->kind) + " (" + kind_word(stage->kind) +
                                  "s: " + (fitting.empty() ? "none found" : join(fitting)) + ")");
        }
        ck::Options options = checked_options(*stage->plugin, stage->spec, stage->kind);
        const std::string& name = stage->spec.name;
        call_plugin(name, [&] {
            if (stage->kind == CK_STAGE_READER && d.create_reader)
                stage->reader.reset(d.create_reader(options, context_));
            else if (stage->kind == CK_STAGE_TRANSFORM && d.create_transform)
                stage->transform.reset(d.create_transform(options, context_));
            else if (stage->kind == CK_STAGE_WRITER && d.create_writer)
                stage->writer.reset(d.create_writer(options, context_));
        });
        if (!stage->reader && !stage->transform && !stage->writer)
            throw ck::plugin_bug("plugin '" + name + "' declares a " + kind_word(stage->kind) +
                                     " but did not create one",
                                 stage->plugin->path.string());
        stages_.push_back(std::move(stage));
    }
}

Pipeline::~Pipeline() = default;

void Pipeline::use_converted_adapters(Stage& stage, const fs::path& input) {
    if (stage.spec.name != "lora") return;
    if (!converted_adapters_) converted_adapters_ = std::make_unique<ConvertedAdapters>();
    // The pipeline's input is the base checkpoint when the hf reader reads a folder.
    std::error_code ec;
    const bool checkpoint = stages_.front()->spec.name == "hf" && fs::is_directory(input, ec);
    const auto options = converted_adapters_->rewrite(
        registry_, stage.spec.options, checkpoint ? std::optional(input) : std::nullopt, context_);
    if (!options) return;
    StageSpec spec = stage.spec;
    spec.options = *options;
    const ck::Options checked = checked_options(*stage.plugin, spec, stage.kind);
    const ck_plugin_descriptor& d = *stage.plugin->descriptor;
    call_plugin(spec.name, [&] { stage.transform.reset(d.create_transform(checked, context_)); });
}

}  // namespace ckhost
