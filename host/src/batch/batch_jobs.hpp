// The jobs of `ckhost batch` (cli.md): a text file of `PIPELINE INPUT OUTPUT` lines, or a JSON
// array of {pipeline, input, output}. Read and checked completely before any job runs.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/conversion.hpp"

namespace ckhost {

struct BatchJob : Conversion {
    std::string where;  // "jobs.txt:12" or "jobs.json: job 3", for messages
};

// Parses jobs from `text`; `source` names it in messages ("-" for stdin). Text lines are split
// like a shell would (quotes and backslashes), `#` lines and blank lines are skipped. Throws a
// usage error naming the line (or the job's position) on a malformed job.
std::vector<BatchJob> parse_jobs(std::string_view text, const std::string& source);

// One text line `PIPELINE INPUT OUTPUT` (with its newline) that parse_jobs reads back as
// exactly this job, whatever the paths hold (spaces, quotes, backslashes, newlines).
std::string job_line(const Conversion& job);

}  // namespace ckhost
