// The jobs of `ckhost batch` (cli.md): a text file of `PIPELINE INPUT OUTPUT` lines, or a JSON
// array of {pipeline, input, output}. Read and checked completely before any job runs.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/conversion.hpp"

namespace ckhost {

// A job as its jobs file gives it: `input` and `output` as written there, and `base`, the folder
// relative ones are relative to (docs/decisions/0046-batch-paths-relative-to-the-jobs-file.md).
struct BatchJob : Conversion {
    std::string where;           // "jobs.txt:12" or "jobs.json: job 3", for messages
    std::filesystem::path base;  // the jobs file's folder; empty: the current directory

    // `path` (input or output as written) as the files are found from the current directory.
    std::filesystem::path resolved(const std::filesystem::path& path) const;
    // The job with its input and output resolved: what the job's conversion reads and writes.
    Conversion files() const;
};

// Parses jobs from `text`; `source` names it in messages ("-" for stdin), and its folder is
// where relative paths lead (none for stdin: the current directory). Text lines are split like a
// shell would (quotes and backslashes), `#` lines and blank lines are skipped. Throws a usage
// error naming the line (or the job's position) on a malformed job.
std::vector<BatchJob> parse_jobs(std::string_view text, const std::string& source);

// One text line `PIPELINE INPUT OUTPUT` (with its newline) that parse_jobs reads back as
// exactly this job, whatever the paths hold (spaces, quotes, backslashes, newlines).
std::string job_line(const Conversion& job);
// `job` as a jobs file in `folder` must give it to lead to the same files: relative paths
// relative to `folder` instead of the job's own jobs file (absolute ones as they are).
Conversion job_seen_from(const BatchJob& job, const std::filesystem::path& folder);

}  // namespace ckhost
