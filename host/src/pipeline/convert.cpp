// A whole conversion: plan, --update's recipe, stream, check the input, commit, report.
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_stages.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
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
#include "ck/support/option_list.hpp"
#include "cli/suggest.hpp"
#include "io/checksum.hpp"
#include "pipeline/conversion_error.hpp"
#include "pipeline/input_identity.hpp"
#include "pipeline/memory_budget.hpp"
#include "pipeline/plugin_call.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/recipe.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {

json Pipeline::recipe(const fs::path& input) const {
    json stages = json::array();
    for (const auto& s : stages_)
        stages.push_back({{"name", s->spec.name},
                          {"options", s->spec.options},
                          {"plugin_version", s->plugin->descriptor->version},
                          {"plugin_sha256", file_digest(s->plugin->path)}});
    // The host decides things too (the file-type rule, ckhost.* keys), so its own build counts.
    json recipe = {{"pipeline", text_},
                   {"stages", stages},
                   {"input", input_identity(input)},
                   {"ckhost", ckhost_build_identity()}};
    if (json side = side_inputs(input); !side.empty()) recipe["side_inputs"] = std::move(side);
    return recipe;
}

json Pipeline::side_inputs(const fs::path& input) const {
    json side = json::object();
    std::error_code ec;
    for (const auto& s : stages_)
        for (const auto& [key, value] : s->spec.options)
            for (const std::string& item : ck::support::option_list(value))
                if (!item.empty() && item != input.string() && fs::exists(item, ec))
                    side[item] = input_identity(item);
    return side;
}

const std::string& Pipeline::writer_name() const {
    return stages_.back()->spec.name;
}

bool Pipeline::writer_streams() const {
    return (stages_.back()->plugin->descriptor->flags & CK_PLUGIN_FLAG_STREAMS) != 0;
}

namespace {

// The sizes of `files` added up (symbolic links followed: what was written through them).
std::uint64_t bytes_of(const std::vector<fs::path>& files) {
    std::uint64_t total = 0;
    for (const auto& p : files) total += fs::file_size(p);
    return total;
}

}  // namespace

ConvertResult Pipeline::run(const ConvertSettings& settings) {
    const bool to_stdout = settings.output == "-";
    ck::OutputSet out(settings.force || settings.update);
    out.set_sync(settings.sync);
    if (to_stdout) out.stream_to(STDOUT_FILENO);
    try {
        return convert(settings, out);
    } catch (const ck::Error& e) {
        // Standard input's spool file is an implementation detail: call it what the user gave.
        const ck::Error shown = settings.input_file && e.file() == settings.input_file->string()
                                    ? e.with_file("standard input")
                                    : e;
        const auto* failed = dynamic_cast<const ConversionError*>(&e);
        const std::string suggestion = failed ? failed->suggestion() : "";
        // The warnings given so far often explain the error: they go with it.
        if (!out.stream_started()) throw ConversionError(shown, context_.warnings(), suggestion);
        // What went to standard output cannot be taken back; the exit status says it failed.
        throw ConversionError(
            ck::Error(shown.message() + "; what standard output has received is not a "
                                        "complete conversion: discard it",
                      shown.file(), shown.offset(), shown.subject(), shown.kind()),
            context_.warnings(), suggestion);
    }
}

// What the report says before anything is written: the stages, the sizes, the outputs, the
// plan, and for --update whether and why the outputs are converted again.
json Pipeline::planned_report(const ConvertSettings& settings, const Freshness& freshness) const {
    json report = {{"command", "convert"},
                   {"pipeline", settings.pipeline},
                   {"input", settings.input.string()},
                   {"sync", settings.sync},
                   {"dry_run", settings.dry_run},
                   {"up_to_date", freshness.up_to_date}};
    if (settings.update && !settings.force && !freshness.up_to_date)
        report["update_reason"] = freshness.reason;
    json stages = json::array();
    for (const auto& s : stages_)
        stages.push_back(
            {{"name", s->spec.name}, {"kind", kind_word(s->kind)}, {"options", s->spec.options}});
    report["stages"] = stages;
    report["threads"] = ck::thread_count();
    report["bytes_in"] = headers_.front().total_bytes();
    // The tensors' bytes the writer is given.
    report["tensor_bytes_out"] = headers_.back().total_bytes();
    // The bytes the outputs will hold when the writer states them (Context::
    // state_output_size); otherwise the tensors' bytes.
    const std::vector<std::uint64_t> sizes = output_bytes();
    report["bytes_out"] = sizes.empty()
                              ? headers_.back().total_bytes()
                              : std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0});
    json outputs = json::array();
    for (const auto& p : outputs_) outputs.push_back(p.string());
    report["outputs"] = outputs;
    report["plan"] = plan_json();
    return report;
}

// Streams every tensor into the outputs and commits them (`before_commit` runs between the two),
// adding to the report what only the run can tell: stale files removed, each stage's time, the
// bytes written and their checksums.
void Pipeline::write_outputs(const ConvertSettings& settings, ck::OutputSet& out, json& report,
                             const json& recipe, const std::function<void()>& before_commit) {
    const bool to_stdout = settings.output == "-";
    // Temporary files that a killed ckhost left beside these targets go first.
    json removed = json::array();
    if (!to_stdout)
        for (const ck::StaleTemporary& stale : ck::remove_stale_temporaries(outputs_)) {
            if (settings.say)
                settings.say("removed stale temporary file " + stale.path.string() +
                             " left by ckhost process " + std::to_string(stale.pid));
            removed.push_back({{"path", stale.path.string()}, {"pid", stale.pid}});
        }
    if (!removed.empty()) report["stale_temporaries_removed"] = removed;
    inclusive_seconds_.assign(stages_.size(), 0.0);
    report["compute_ahead"] = stream(settings, out);
    // Each stage's own time, summed over the threads that called it: its calls minus the
    // upstream calls they made. The writer's calls make none.
    report["stages"][0]["seconds"] = inclusive_seconds_[0];
    for (std::size_t k = 1; k + 1 < stages_.size(); ++k)
        report["stages"][k]["seconds"] = inclusive_seconds_[k] - inclusive_seconds_[k - 1];
    report["stages"].back()["seconds"] = inclusive_seconds_.back();
    before_commit();
    // The old record goes before the outputs it describes are replaced, the new one comes
    // after: a crash between the two leaves no record, never a false one.
    if (settings.update && !to_stdout) forget_recipe(outputs_);
    out.commit();
    if (settings.update && !to_stdout) record_recipe(recipe, outputs_);
    if (to_stdout) return;
    // What the files hold, headers, padding and zero slots included: the plan's figure counts
    // only the tensors the writer was given.
    report["bytes_out"] = bytes_of(outputs_);
    if (settings.checksums) {
        json checksums = json::object();
        for (const auto& p : outputs_) checksums[p.string()] = sha256_file(p);
        report["checksums"] = checksums;
    }
}

// An output the run could not write (it exists without --force, or is not a regular file) stops
// a conversion before anything is read; a --dry-run still prints its plan and says so.
void Pipeline::check_target(const ck::OutputSet& out, const fs::path& target,
                            const InputIdentity& input, bool dry_run) {
    try {
        refuse_replacing_the_input(input, target, writer_name(),
                                   stages_.front()->spec.name == writer_name());
        out.check_target(target);
    } catch (const ck::Error& e) {
        if (!dry_run || e.kind() == ck::ErrorKind::interrupt) throw;
        context_.warn((e.file().empty() ? target.string() : e.file()) + ": " + e.message() +
                      "; the conversion would stop here");
    }
}

ConvertResult Pipeline::convert(const ConvertSettings& settings, ck::OutputSet& out) {
    auto started = std::chrono::steady_clock::now();
    const bool to_stdout = settings.output == "-";
    const fs::path& input = settings.input_file ? *settings.input_file : settings.input;
    // Taken before the reader opens the file: a change between the two is then caught too.
    const InputIdentity input_identity = input_identity_of(input);
    plan(input, settings.output, settings.input_file ? "stdin" : "");
    if (to_stdout && outputs_ != std::vector<fs::path>{"-"}) {
        std::vector<std::string> names;
        for (const auto& p : outputs_) names.push_back(p.string());
        throw ck::usage_error("-o -: the writer '" + stages_.back()->spec.text + "' would write " +
                              std::to_string(outputs_.size()) + " files (" + join(names) +
                              "); standard output takes one");
    }
    // --update: the recipe as it is now, and whether the record beside the outputs matches it.
    json recipe;
    Freshness freshness;
    if (settings.update) {
        recipe = this->recipe(input);
        if (!settings.force) freshness = check_recipe(recipe, outputs_);
    }
    if (!to_stdout)
        for (const auto& p : outputs_) check_target(out, p, input_identity, settings.dry_run);
    json report = planned_report(settings, freshness);
    if (settings.update && !settings.force && !freshness.up_to_date && settings.say &&
        !settings.dry_run)
        settings.say("converting: " + freshness.reason);
    if (!settings.dry_run && !freshness.up_to_date)
        write_outputs(settings, out, report, recipe,
                      [&] { check_input_unchanged(input_identity); });
    report["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report["warnings"] = context_.warnings();
    report["notes"] = context_.notes();
    json extra = json::object();
    for (const auto& [key, value] : context_.reports())
        extra[key] = json::parse(value, nullptr, false);
    report["reports"] = extra;
    return {report, context_.warnings(), context_.notes()};
}

}  // namespace ckhost
