// `ckhost batch-report`: the merged reports of a sharded batch.
#include <iostream>

#include "batch/batch_report.hpp"
#include "ck/error.hpp"
#include "cli/command_line.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* batch_report_usage =
    "usage: ckhost batch-report DIR [--jobs-file JOBS] [--resubmit FILE] [--json]\n\n"
    "Merges the reports that 'ckhost batch --shard ... --report-dir DIR' wrote\n"
    "(DIR/shard-K.json): totals, the failed jobs with their errors, and the jobs\n"
    "that never ran (a shard that died wrote no report, or was interrupted).\n"
    "Exit 0 when every job is done (ok or up to date), 1 when any failed, 75 when\n"
    "none failed but some never ran (run them again: --resubmit).\n\n"
    "examples:\n"
    "  ckhost batch-report reports/\n"
    "  ckhost batch-report reports/ --resubmit todo.txt --json\n\n";

}  // namespace

int batch_report(const Args& args, OptionList* options_out) {
    Common c;
    ckhost::BatchReportSettings settings;
    po::options_description d("batch-report options");
    d.add_options()("jobs-file", po::value(&settings.jobs_file),
                    "the shards' jobs list (default: the one their reports name)")(
        "resubmit", po::value(&settings.resubmit),
        "write the jobs still to do (failed, not run) to FILE, in the jobs-file format");
    if (list_or_parse(args, d,
                      positional_argument("report-dir", po::value(&settings.report_dir), 1), c,
                      batch_report_usage, options_out, uses_json | uses_no_sync))
        return ok;
    if (settings.report_dir.empty())
        throw ck::usage_error("missing DIR (the shards' --report-dir)");
    apply_globals(c);
    settings.json = c.json;
    settings.sync = sync_outputs(c);
    return ckhost::run_batch_report(settings, std::cout, std::cerr);
}

}  // namespace ckhost::commands
