// A batch job run as its own `ckhost convert` process: its command line, how it ended.
#include "batch/batch_job.hpp"
#include "batch/batch.hpp"

#include <boost/dll/runtime_symbol_info.hpp>

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "batch/batch_jobs.hpp"
#include "batch/batch_shard.hpp"
#include "batch/child_process.hpp"
#include "ck/context.hpp"
#include "ck/enum_names.hpp"
#include "ck/error.hpp"
#include "ck/output.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/recipe.hpp"

namespace ckhost::batch_detail {

std::atomic<int> signals_received{0};

namespace {

// The names --json and the table print, in Status order.
constexpr std::array<std::string_view, 6> status_names = {"pending", "ok",          "skipped",
                                                          "failed",  "interrupted", "not_run"};

}  // namespace

std::string status_name(Status s) {
    return std::string(ck::enum_name(status_names, s, "?"));
}

compare::CompareSettings compare_settings(const BatchJob& job) {
    const CompareJob files = job.compare_files();
    compare::CompareSettings settings;
    settings.a = files.inputs.front();
    settings.b.assign(files.inputs.begin() + 1, files.inputs.end());
    settings.report = files.report;
    settings.imatrix = files.imatrix;
    return settings;
}

namespace {

// A path as an argument of its own: one that starts with '-' would read as an option.
std::string argument(const fs::path& path) {
    return path.native().starts_with('-') ? "./" + path.string() : path.string();
}

// `ckhost compare` with the job's files; --update when it writes a report, so that a report
// its recipe record says is up to date is skipped as a conversion's outputs are.
std::vector<std::string> compare_command(const BatchJob& job) {
    const CompareJob files = job.compare_files();
    std::vector<std::string> args = {boost::dll::program_location().string(), "compare", "--json",
                                     "--quiet"};
    for (const fs::path& input : files.inputs) args.push_back(argument(input));
    if (!files.report.empty()) {
        args.push_back("--report=" + files.report.string());
        args.push_back("--update");
    }
    if (!files.imatrix.empty()) args.push_back("--imatrix=" + files.imatrix.string());
    if (files.top) args.push_back("--top=" + std::to_string(*files.top));
    return args;
}

}  // namespace

std::vector<std::string> job_command(const BatchSettings& settings, const BatchJob& job) {
    const Conversion files = job.files();
    std::vector<std::string> args =
        job.compare ? compare_command(job)
                    : std::vector<std::string>{boost::dll::program_location().string(),
                                               "convert",
                                               "--pipeline=" + job.pipeline,
                                               "--input=" + files.input.string(),
                                               "--output=" + files.output.string(),
                                               "--json",
                                               "--quiet",
                                               "--update"};
    // --force converts whatever the record says; --update still records the recipe.
    if (settings.force) args.push_back("--force");
    for (const auto& dir : settings.plugin_dirs) args.push_back("--plugin-dir=" + dir);
    if (!settings.sync) args.push_back("--no-sync");
    if (!settings.isa.empty()) args.push_back("--isa=" + settings.isa);
    // The batch's threads shared between the jobs running at once, so that --jobs never
    // oversubscribes the machine: 8 threads and --jobs 3 give each job 2.
    const unsigned jobs = std::max(1u, settings.parallel);
    const unsigned share = std::max(1u, settings.threads / jobs);
    args.push_back("--threads=" + std::to_string(share));
    if (settings.max_memory && !job.compare)
        args.push_back("--max-memory=" +
                       std::to_string(std::max<std::uint64_t>(1, settings.max_memory / jobs)));
    return args;
}

// The job's error message: ckhost's "ckhost: error: ..." line(s), else whatever it printed.
std::string error_text(const std::string& err) {
    std::istringstream lines(err);
    std::string line, found;
    const std::string prefix = "ckhost: error: ";
    while (std::getline(lines, line))
        if (line.rfind(prefix, 0) == 0)
            found += (found.empty() ? "" : "; ") + line.substr(prefix.size());
    if (!found.empty()) return found;
    std::string all = err;
    while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
    return all;
}

void run_job(const BatchSettings& settings, JobState& s) {
    const auto started = std::chrono::steady_clock::now();
    ChildOutcome child;
    try {
        child = run_child(job_command(settings, s.job), {"CKHOST_BATCH_JOB=1"}, [] {
            const int n = signals_received.load();
            return n == 0 ? 0 : n == 1 ? SIGINT : SIGKILL;
        });
    } catch (const ck::Error& e) {
        s.status = Status::failed;
        s.message = e.what();
        return;
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    s.report = json::parse(child.out, nullptr, false);
    if (s.report.is_discarded()) s.report = nullptr;
    if (child.signal) {
        s.status = signals_received ? Status::interrupted : Status::failed;
        s.message = std::string("ended by signal ") + std::to_string(child.signal) + " (" +
                    ::strsignal(child.signal) + ")";
        // A job killed outright (SIGKILL: the out-of-memory killer, a scheduler's time limit)
        // could not remove its temporary files. It has been waited for, so its files are
        // certainly stale: remove them now rather than at the next run.
        for (const ck::StaleTemporary& stale : ck::remove_stale_temporaries(s.outputs))
            s.message += "; removed its temporary file " + stale.path.string();
        return;
    }
    s.exit_code = child.exit_code;
    if (child.exit_code == 0) {
        s.status = s.report.is_object() && s.report.value("up_to_date", false) ? Status::skipped
                                                                               : Status::ok;
        if (s.status == Status::skipped) s.message = "up to date";
        // Outputs were there but not trusted: say why they were made again.
        if (s.status == Status::ok && s.report.is_object() && s.report.contains("update_reason") &&
            s.freshness.reason != no_output_yet)
            s.message = "converted again: " + s.report["update_reason"].get<std::string>();
    } else {
        s.status = child.exit_code == interrupted ? Status::interrupted : Status::failed;
        s.message = error_text(child.err);
    }
}

std::string seconds_text(double seconds) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << seconds << " s";
    return s.str();
}

json job_json(const JobState& s) {
    json outputs = json::array();
    for (const auto& p : s.outputs) outputs.push_back(p.string());
    json j = {{"job", s.number},
              {"where", s.job.where},
              {"pipeline", s.job.pipeline},
              {"input", s.job.input.string()},
              {"output", s.job.output.string()},
              {"outputs", outputs},
              {"status", status_name(s.status)},
              {"seconds", s.seconds}};
    j["exit_code"] = s.exit_code ? json(*s.exit_code) : json(nullptr);
    if (s.job.compare) {
        json inputs = json::array();
        for (const auto& input : s.job.compare->inputs) inputs.push_back(input.string());
        j["compare"] = {{"inputs", inputs},
                        {"report", s.job.compare->report.string()},
                        {"imatrix", s.job.compare->imatrix.string()}};
    }
    // Why it was skipped or converted again is a reason; anything else said is an error.
    if (!s.message.empty())
        j[s.status == Status::skipped || s.status == Status::ok ? "reason" : "error"] = s.message;
    if (!s.report.is_null()) j["report"] = s.report;
    return j;
}

}  // namespace ckhost::batch_detail
