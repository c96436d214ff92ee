// One job of a batch, shared by batch.cpp (planning and scheduling), batch_job.cpp (running it
// as a child process) and batch_output.cpp (the reports); not for use outside batch/.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batch/batch.hpp"
#include "batch/batch_jobs.hpp"
#include "compare/compare.hpp"
#include "pipeline/recipe.hpp"

namespace ckhost::batch_detail {

namespace fs = std::filesystem;
using nlohmann::json;

// Signals the batch received (SIGINT/SIGTERM): the first stops it, the second kills the jobs.
extern std::atomic<int> signals_received;

enum class Status { pending, ok, skipped, failed, interrupted, not_run };
std::string status_name(Status s);

struct JobState {
    BatchJob job;
    std::size_t number = 0;         // 1-based, in the whole jobs list (a shard runs some of them)
    std::vector<fs::path> outputs;  // as the job's writer plans them
    Status status = Status::pending;
    std::optional<int> exit_code;
    std::string message;  // why it failed, was skipped, or was converted again
    Freshness freshness;  // what the outputs' recipe record said when planned
    double seconds = 0;
    json report;  // the job's own `convert --json` report
};

// The child `ckhost convert` (or `ckhost compare`) command line of a job.
std::vector<std::string> job_command(const BatchSettings& settings, const BatchJob& job);
// A compare job's files, resolved, as `ckhost compare` takes them.
compare::CompareSettings compare_settings(const BatchJob& job);
// Runs a job as a child process and records how it ended in `s`.
void run_job(const BatchSettings& settings, JobState& s);
std::string seconds_text(double seconds);
json job_json(const JobState& s);

// How many jobs ended in each final status (every one present, zero or not).
std::map<Status, std::size_t> count_statuses(const std::vector<JobState>& jobs);
// The `--json` report: the batch, a summary by status, and every job with its own report.
json json_report(const BatchSettings& settings, const std::vector<JobState>& jobs,
                 std::size_t jobs_in_list, const std::map<Status, std::size_t>& counts,
                 double seconds, bool interrupted);
// --report-dir's DIR/shard-K.json, written atomically.
void write_report_file(const BatchSettings& settings, const json& doc);
// The text report: one line per job (with its error and warnings), then the totals.
void print_text_report(std::ostream& out, const std::vector<JobState>& jobs,
                       const std::map<Status, std::size_t>& counts, double seconds);

}  // namespace ckhost::batch_detail
