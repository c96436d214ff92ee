// `ckhost batch`: many conversions, N at a time, each in its own process.
#include <cstdlib>
#include <iostream>

#include "batch/batch.hpp"
#include "batch/batch_shard.hpp"
#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "cli/command_line.hpp"
#include "cli/exit_codes.hpp"
#include "cli/process.hpp"
#include "commands/commands.hpp"
#include "pipeline/memory_budget.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* batch_usage =
    "usage: ckhost batch JOBS [--jobs N] [--json] [--force] [--shard K/N|auto]\n"
    "                         [--report-dir DIR]\n\n"
    "Runs many conversions, N at a time, each in its own process. JOBS is a text file\n"
    "(or - for stdin) with one 'PIPELINE INPUT OUTPUT' job per line, '#' comments and\n"
    "blank lines ignored, or a JSON array of {\"pipeline\", \"input\", \"output\"}.\n"
    "A failing job does not stop the others; exit 1 when any failed. A job whose\n"
    "outputs its recipe record (OUTPUT.ckhost.json) says were made by the same\n"
    "pipeline from the same input with the same ckhost and plugins, unchanged since,\n"
    "is skipped unless --force; any other is converted, saying why. Ctrl-C stops\n"
    "every running job cleanly (exit 130): run the batch again to finish it.\n"
    "--shard K/N runs the K-th of N slices (every job writing one file in one slice,\n"
    "balanced by input size); --shard auto takes K and N from a job array (Slurm,\n"
    "SGE; Kubernetes and PBS with auto/N). Merge the shards' --report-dir reports\n"
    "with 'ckhost batch-report DIR'.\n\n"
    "examples:\n"
    "  ckhost batch jobs.txt --jobs 2\n"
    "  ckhost batch jobs.txt --shard auto --report-dir reports/ --jobs 4\n"
    "  printf 'gguf:headpack:bump a.gguf out/a/\\n' | ckhost batch - --json\n\n";

}  // namespace

int batch(const Args& args, OptionList* options_out) {
    Common c;
    ckhost::BatchSettings settings;
    std::string shard;
    po::options_description d("batch options");
    d.add_options()("jobs,j", po::value(&settings.parallel)->default_value(1),
                    "run N conversions at once")(
        "force,f", po::bool_switch(&settings.force),
        "rerun jobs whose outputs are up to date, overwriting them")(
        "shard", po::value(&shard),
        "run slice K of N of the jobs (K from 0): K/N, auto (the scheduler's array task "
        "variables) or auto/N")("report-dir", po::value(&settings.report_dir),
                                "also write the --json report to DIR/shard-K.json, atomically "
                                "(for ckhost batch-report DIR)");
    if (list_or_parse(args, d, positional_argument("jobs-file", po::value(&settings.jobs_file), 1),
                      c, batch_usage, options_out))
        return ok;
    if (settings.jobs_file.empty())
        throw ck::usage_error("missing JOBS (a jobs file, or - for stdin)");
    if (settings.parallel < 1 || settings.parallel > 256)
        throw ck::usage_error("--jobs " + std::to_string(settings.parallel) +
                              ": expected a number from 1 to 256");
    if (!shard.empty())
        settings.shard =
            ckhost::parse_shard(shard, [](const char* name) { return std::getenv(name); });
    if (!settings.report_dir.empty() && !settings.shard)
        settings.shard = ckhost::ShardSpec{0, 1, "the whole list"};
    apply_globals(c);
    settings.json = c.json;
    settings.quiet = c.quiet;
    settings.plugin_dirs = c.plugin_dirs;
    settings.isa = c.isa;
    settings.threads = ck::thread_count();
    settings.sync = sync_outputs(c);
    settings.max_memory = max_memory(c);
    if (settings.max_memory == 0) settings.max_memory = ckhost::default_max_memory();
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    if (!c.quiet)
        for (const auto& w : registry.warnings()) std::cerr << "warning: " << w << "\n";
    stop_batch_on_interrupt();
    return ckhost::run_batch(registry, settings, std::cout, std::cerr);
}

}  // namespace ckhost::commands
