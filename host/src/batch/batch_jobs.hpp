// The jobs of `ckhost batch` (cli.md): a text file of `PIPELINE INPUT OUTPUT` lines (or
// `compare A B ...` lines), or a JSON array of {pipeline, input, output} (or {compare, ...}).
// Read and checked completely before any job runs.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/conversion.hpp"

namespace ckhost {

// A compare job (`compare A B [B...] [--report FILE] [--imatrix FILE] [--top N]`, docs/batch.md),
// its paths as written in the jobs file.
struct CompareJob {
    std::vector<std::filesystem::path> inputs;  // A, then each B
    std::filesystem::path report;               // empty: none
    std::filesystem::path imatrix;              // empty: none
    std::optional<long long> top;
};

// A job as its jobs file gives it: `input` and `output` as written there, and `base`, the folder
// relative ones are relative to (docs/decisions/0046-batch-paths-relative-to-the-jobs-file.md).
// A compare job has `compare`, with `pipeline` "compare", `input` its A and `output` its report
// (what the reports and the shard split name it by).
struct BatchJob : Conversion {
    std::string where;           // "jobs.txt:12" or "jobs.json: job 3", for messages
    std::filesystem::path base;  // the jobs file's folder; empty: the current directory
    std::optional<CompareJob> compare{};

    // `path` (input or output as written) as the files are found from the current directory.
    std::filesystem::path resolved(const std::filesystem::path& path) const;
    // The job with its input and output resolved: what the job's conversion reads and writes.
    Conversion files() const;
    // A compare job's files resolved the same way.
    CompareJob compare_files() const;
};

// Parses jobs from `text`; `source` names it in messages ("-" for stdin), and its folder is
// where relative paths lead (none for stdin: the current directory). Text lines are split like a
// shell would (quotes and backslashes), `#` lines and blank lines are skipped. Throws a usage
// error naming the line (or the job's position) on a malformed job.
std::vector<BatchJob> parse_jobs(std::string_view text, const std::string& source);

// One text line `PIPELINE INPUT OUTPUT` (with its newline) that parse_jobs reads back as
// exactly this job, whatever the paths hold (spaces, quotes, backslashes, newlines); a compare
// job's `compare ...` line.
std::string job_line(const Conversion& job);
std::string job_line(const BatchJob& job);
// `job` as a jobs file in `folder` must give it to lead to the same files: relative paths
// relative to `folder` instead of the job's own jobs file (absolute ones as they are).
BatchJob job_seen_from(const BatchJob& job, const std::filesystem::path& folder);

}  // namespace ckhost
