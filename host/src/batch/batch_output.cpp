// What a batch says when it is done: the --json report, the report file, the text table.
#include "batch/batch.hpp"
#include "batch/batch_job.hpp"

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

// How many jobs ended in each final status (every one present, zero or not).
std::map<Status, std::size_t> count_statuses(const std::vector<JobState>& jobs) {
    std::map<Status, std::size_t> counts;
    for (Status st :
         {Status::ok, Status::skipped, Status::failed, Status::interrupted, Status::not_run})
        counts[st] = 0;
    for (const auto& s : jobs) ++counts[s.status];
    return counts;
}

// The `--json` report: the batch, a summary by status, and every job with its own report.
json json_report(const BatchSettings& settings, const std::vector<JobState>& jobs,
                 std::size_t jobs_in_list, const std::map<Status, std::size_t>& counts,
                 double seconds, bool interrupted) {
    json list = json::array();
    for (const auto& s : jobs) list.push_back(job_json(s));
    json summary = {{"jobs", jobs.size()}};
    for (Status st :
         {Status::ok, Status::skipped, Status::failed, Status::interrupted, Status::not_run})
        summary[status_name(st)] = counts.at(st);
    json doc = json_document("batch", counts.at(Status::failed) == 0 &&
                                          counts.at(Status::interrupted) == 0 && !interrupted);
    doc.update({{"jobs_file", settings.jobs_file},
                {"parallel", settings.parallel},
                {"interrupted", interrupted},
                {"seconds", seconds},
                {"summary", summary},
                {"jobs", list}});
    // Which slice this was, and of what list: what batch-report needs to find the jobs that a
    // shard which never reported would have run.
    doc["shard"] = nullptr;
    if (settings.shard)
        doc["shard"] = {
            {"index", settings.shard->index},
            {"count", settings.shard->count},
            {"source", settings.shard->source},
            {"jobs_in_list", jobs_in_list},
            {"jobs_file", settings.jobs_file == "-" ? std::string("-")
                                                    : fs::absolute(settings.jobs_file).string()}};
    return doc;
}

// DIR/shard-K.json, atomically (a temporary file renamed into place, fsync'ed unless
// --no-sync): a task killed while writing it leaves the previous report or none, never half of
// one, and batch-report then counts its jobs as not run.
void write_report_file(const BatchSettings& settings, const json& doc) {
    const fs::path path = fs::path(settings.report_dir) /
                          ("shard-" + std::to_string(settings.shard->index) + ".json");
    std::ostringstream text;
    print_json(text, doc);
    // The jobs have stopped; the interrupt has done its work and must not stop the report.
    ck::clear_interrupt();
    const std::string bytes = text.str();
    ck::OutputSet set(true);
    set.set_sync(settings.sync);
    set.create(path).write(bytes.data(), bytes.size());
    set.commit();
}

// The text report: one line per job (with its error and warnings), then the totals.
void print_text_report(std::ostream& out, const std::vector<JobState>& jobs,
                       const std::map<Status, std::size_t>& counts, double seconds) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const JobState& s = jobs[i];
        out << std::setw(3) << s.number << "  " << std::left << std::setw(11)
            << status_name(s.status) << std::right << std::setw(9)
            << (s.status == Status::ok || s.status == Status::failed ? seconds_text(s.seconds)
                                                                     : "-")
            << "  " << s.job.where << "  " << s.job.pipeline << "  " << s.job.input.string()
            << " -> " << s.job.output.string() << "\n";
        if (!s.message.empty())
            out << "     "
                << (s.status == Status::skipped || s.status == Status::ok ? "" : "error: ")
                << s.message << "\n";
        if (s.report.is_object() && s.report.contains("warnings"))
            for (const auto& w : s.report["warnings"])
                if (w.is_string()) out << "     warning: " << w.get<std::string>() << "\n";
        if (s.report.is_object() && s.report.contains("stale_temporaries_removed"))
            for (const auto& stale : s.report["stale_temporaries_removed"])
                out << "     removed stale temporary file " << stale.value("path", "")
                    << " left by ckhost process " << stale.value("pid", 0L) << "\n";
    }
    out << jobs.size() << " jobs: " << counts.at(Status::ok) << " ok, "
        << counts.at(Status::skipped) << " skipped, " << counts.at(Status::failed) << " failed";
    if (counts.at(Status::interrupted) || counts.at(Status::not_run))
        out << ", " << counts.at(Status::interrupted) << " interrupted, "
            << counts.at(Status::not_run) << " not run";
    out << " (" << seconds_text(seconds) << ")\n";
}

}  // namespace ckhost::batch_detail
