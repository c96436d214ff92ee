// `ckhost compare`: the inputs opened and compared, then the outputs: the report through the
// host's atomic output (a temporary file renamed into place, nothing left on failure), the table
// or the --json document on stdout.
#include "compare/compare.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/output.hpp"
#include "ck/parallel.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "importance_matrix.hpp"
#include "pipeline/recipe.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost::compare {

// The files compared with their identities (size, modification time, inode) and this ckhost's
// build. The text table's --top is left out: the report holds every tensor whatever it is.
json compare_recipe(const CompareSettings& settings) {
    std::string line = "compare " + settings.a.string();
    json identities = json::array({input_identity(settings.a)});
    json inputs = json::array({settings.a.string()});
    for (const fs::path& b : settings.b) {
        line += " " + b.string();
        identities.push_back(input_identity(b));
        inputs.push_back(b.string());
    }
    json options = {{"inputs", inputs}, {"imatrix", settings.imatrix.string()}};
    if (!settings.imatrix.empty()) {
        line += " --imatrix " + settings.imatrix.string();
        identities.push_back(input_identity(settings.imatrix));
    }
    return {{"pipeline", line},
            {"stages", json::array({{{"name", "compare"}, {"options", options}}})},
            {"input", identities},
            {"ckhost", ckhost_build_identity()}};
}

namespace {

// A report must never replace a file it reads (--force on a typo'd command line).
void refuse_replacing_an_input(const CompareSettings& settings) {
    std::error_code ec;
    if (!fs::exists(settings.report, ec)) return;
    std::vector<fs::path> read = {settings.a, settings.imatrix};
    read.insert(read.end(), settings.b.begin(), settings.b.end());
    for (const fs::path& input : read)
        if (!input.empty() && fs::equivalent(settings.report, input, ec))
            throw ck::output_error(
                "--report would replace " + input.string() + ", which compare reads",
                settings.report.string());
}

Report build_report(PluginRegistry& registry, const CompareSettings& settings) {
    ck::RecordingContext context;
    std::optional<ckplugin::quantize::ImportanceMatrix> imatrix;
    if (!settings.imatrix.empty())
        imatrix = ckplugin::quantize::ImportanceMatrix::load(settings.imatrix);
    // Every input is opened (and checked) before any is read: a bad B fails at once, not after
    // the comparisons before it.
    const std::unique_ptr<Input> a = open_input(registry, settings.a, context);
    std::vector<std::unique_ptr<Input>> bs;
    for (const fs::path& b : settings.b) bs.push_back(open_input(registry, b, context));
    Report report;
    report.file_a = settings.a.string();
    report.format_a = a->opened.plugin;
    report.imatrix = settings.imatrix.string();
    EngineSettings engine;
    engine.imatrix = imatrix ? &*imatrix : nullptr;
    for (const auto& b : bs) {
        report.pairs.push_back(compare_inputs(*a, *b, engine));
        report.summaries.push_back(summarize(report.pairs.back()));
    }
    report.warnings = context.warnings();
    return report;
}

json document(const CompareSettings& settings, const Report* report, double seconds) {
    json doc = json_document("compare");
    if (report) doc.update(report_json(*report));
    doc["report"] = settings.report.empty() ? json(nullptr) : json(settings.report.string());
    doc["up_to_date"] = report == nullptr;
    doc["threads"] = ck::thread_count();
    doc["seconds"] = seconds;
    doc["warnings"] = report ? report->warnings : std::vector<std::string>{};
    return doc;
}

}  // namespace

int run_compare(PluginRegistry& registry, const CompareSettings& settings, std::ostream& out,
                std::ostream& err) {
    const auto started = std::chrono::steady_clock::now();
    const auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    ck::OutputSet outputs(settings.force);
    outputs.set_sync(settings.sync);
    const std::vector<fs::path> report_files = {settings.report};
    json recipe;
    if (!settings.report.empty()) {
        refuse_replacing_an_input(settings);
        if (settings.update) {
            recipe = compare_recipe(settings);
            const Freshness fresh =
                settings.force ? Freshness{} : check_recipe(recipe, report_files);
            if (fresh.up_to_date) {
                if (settings.json) print_json(out, document(settings, nullptr, seconds()));
                if (!settings.quiet && !settings.json)
                    err << "ckhost: up to date (" << recipe_path(report_files).string()
                        << " names these files, unchanged)\n";
                return ok;
            }
        }
        // Before any work: a report that exists without --force stops the run now.
        outputs.check_target(settings.report);
    }
    Report report = build_report(registry, settings);
    if (!settings.quiet)
        for (const std::string& w : report.warnings) err << "warning: " << w << "\n";
    if (!settings.report.empty()) {
        const std::string html = report_html(report);
        ck::remove_stale_temporaries(report_files);
        outputs.create(settings.report).write(html.data(), html.size());
        // As for a conversion's outputs: the old record goes before the report it describes is
        // replaced, the new one comes after, so a crash between leaves none, never a false one.
        if (settings.update) forget_recipe(report_files);
        outputs.commit();
        if (settings.update) record_recipe(recipe, report_files);
    }
    if (settings.json) {
        print_json(out, document(settings, &report, seconds()));
    } else {
        print_text(report, settings.top, out);
        if (!settings.report.empty() && !settings.quiet)
            err << "ckhost: wrote " << settings.report.string() << "\n";
    }
    return ok;
}

}  // namespace ckhost::compare
