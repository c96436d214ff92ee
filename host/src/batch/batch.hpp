// `ckhost batch`: many conversions, N at a time, each in its own ckhost process (cli.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "batch/batch_shard.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost {

struct BatchSettings {
    std::string jobs_file;  // "-": standard input
    unsigned parallel = 1;  // --jobs N
    bool force = false;     // rewrite outputs even when they are up to date
    bool json = false;
    bool quiet = false;
    // Passed on to every job's ckhost.
    std::vector<std::string> plugin_dirs;
    std::string isa;
    unsigned threads = 1;          // the batch's threads, divided between its running jobs
    std::uint64_t max_memory = 0;  // the batch's --max-memory, divided the same way
    bool sync = true;              // false: --no-sync
    // --shard: run only this slice of the jobs (batch_shard.hpp); none: every job.
    std::optional<ShardSpec> shard;
    // --report-dir: the --json report also goes to DIR/shard-K.json, written atomically, for
    // `ckhost batch-report DIR`.
    std::string report_dir;
};

// Runs the batch and prints the summary (text or JSON) on `out`, one line per finished job on
// `err` unless quiet. Returns the exit code: 0, 1 when any job failed, 130 when interrupted.
int run_batch(PluginRegistry& registry, const BatchSettings& settings, std::ostream& out,
              std::ostream& err);

// Called by main's signal handler: the first signal stops the batch cleanly (running jobs are
// told to stop and remove their temporary files), a second one kills the running jobs.
void batch_signal_received() noexcept;

}  // namespace ckhost
