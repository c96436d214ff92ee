// `ckhost batch-report DIR` (cli.md): merges the reports that the shards of a sharded batch
// (`ckhost batch --shard K/N --report-dir DIR`) wrote, against the jobs list they split.
#pragma once

#include <iosfwd>
#include <string>

namespace ckhost {

struct BatchReportSettings {
    std::string report_dir;
    std::string jobs_file;  // empty: the one the reports name
    std::string resubmit;   // empty: none; else where the jobs still to do go
    bool json = false;
    bool sync = true;  // fsync the --resubmit file (false: --no-sync)
};

// Exit status when no job failed but some never ran (a shard died or was interrupted): the
// work can be finished by running the rest (sysexits.h's EX_TEMPFAIL, "try again later").
inline constexpr int jobs_not_run = 75;

// Prints the merged report on `out` (text or JSON) and writes the --resubmit file. Returns 0
// when every job of the list is ok or up to date, 1 when any failed, jobs_not_run when none
// failed but some have no result. Throws for an unusable DIR, report or jobs list.
int run_batch_report(const BatchReportSettings& settings, std::ostream& out, std::ostream& err);

}  // namespace ckhost
