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
#include "compare/compare.hpp"
#include "inspect/inspect.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/recipe.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {
namespace {

using namespace batch_detail;

std::string read_jobs_text(const std::string& jobs_file) {
    std::ostringstream text;
    if (jobs_file == "-") {
        text << std::cin.rdbuf();
        return text.str();
    }
    std::ifstream in(jobs_file, std::ios::binary);
    if (!in)
        throw ck::Error(std::string("cannot read the jobs file: ") + ::strerror(errno), jobs_file);
    text << in.rdbuf();
    return text.str();
}

// For a job whose input is not where its jobs file leads but is where the current directory
// leads (how relative paths in a jobs file were read before decision 0046): what changed and
// what to write instead. Empty otherwise.
std::string moved_input_hint(const BatchJob& job) {
    const fs::path resolved = job.resolved(job.input);
    std::error_code ec;
    if (resolved == job.input || fs::exists(resolved, ec) || !fs::exists(job.input, ec)) return "";
    const fs::path from_there = fs::absolute(job.input).lexically_normal().lexically_relative(
        fs::absolute(job.base).lexically_normal());
    return " (relative paths in a jobs file are relative to its folder, " + job.base.string() +
           "/: the file " + job.input.string() + " of the current directory is " +
           from_there.string() + " from there)";
}

// Plans jobs in this process (headers only: a millisecond or so each) to learn the files each
// one will write before it runs. Jobs are planned in order, under a lock, as the workers reach
// them, so planning overlaps with the jobs already running. Planning failures (an unknown
// stage, a malformed input) fail that job alone.
class Planner {
  public:
    Planner(PluginRegistry& registry, std::vector<JobState>& jobs, bool force)
        : registry_(registry), jobs_(jobs), force_(force) {}

    // Plans every job up to and including `index` that is not planned yet.
    void plan_through(std::size_t index) {
        std::lock_guard lock(mutex_);
        for (; planned_ <= index && planned_ < jobs_.size(); ++planned_) plan(jobs_[planned_]);
    }

    // The directories missing when a job that writes into them was planned: the ones this run
    // may create. Read once every job has ended.
    const std::vector<fs::path>& new_directories() const { return new_directories_; }

  private:
    // The files the job writes, and what their recipe record says of them.
    void plan_outputs(JobState& s) {
        if (s.job.compare) {
            const compare::CompareSettings settings = compare_settings(s.job);
            // Every file is opened, as a conversion's input is planned: one that cannot be read
            // fails the job before it runs.
            ck::RecordingContext quiet;
            for (const fs::path& input : s.job.compare_files().inputs)
                open_with_any_reader(registry_, input, quiet);
            if (!settings.report.empty()) s.outputs = {settings.report};
            if (!force_ && !s.outputs.empty())
                s.freshness = check_recipe(compare::compare_recipe(settings), s.outputs);
            return;
        }
        const Conversion files = s.job.files();
        Pipeline pipeline(registry_, s.job.pipeline);
        pipeline.plan(files.input, files.output);
        s.outputs = pipeline.outputs();
        if (!force_) s.freshness = check_recipe(pipeline.recipe(files.input), s.outputs);
    }

    void plan(JobState& s) {
        try {
            plan_outputs(s);
        } catch (const ck::Error& e) {
            s.status = Status::failed;
            s.exit_code = exit_code_for(e.kind());
            s.message = e.what() + moved_input_hint(s.job);
            return;
        }
        // Before the job runs: a directory made by an earlier job of this run still counts,
        // since that job was planned (and noted it) before it ran.
        for (const auto& p : s.outputs)
            for (const fs::path& dir : ck::missing_directories(p.parent_path()))
                if (std::find(new_directories_.begin(), new_directories_.end(), dir) ==
                    new_directories_.end())
                    new_directories_.push_back(dir);
        // Two jobs writing one file would race for it, and the second would then look up to
        // date: refuse the later one.
        for (const auto& p : s.outputs) {
            auto [other, fresh] = claimed_.emplace(fs::absolute(p).lexically_normal(), &s);
            if (fresh) continue;
            s.status = Status::failed;
            s.exit_code = usage;
            s.message = "output " + p.string() + " is also written by the job at " +
                        other->second->job.where;
            return;
        }
        if (!force_ && s.freshness.up_to_date) {
            s.status = Status::skipped;
            s.message = "up to date";
        }
    }

    PluginRegistry& registry_;
    std::vector<JobState>& jobs_;
    const bool force_;
    std::mutex mutex_;
    std::size_t planned_ = 0;
    std::map<fs::path, const JobState*> claimed_;  // output file -> the job that writes it
    std::vector<fs::path> new_directories_;
};

// What the shard split needs of a job: the files it writes, by absolute path (its planned
// outputs, or its OUTPUT argument when it does not plan: that job fails wherever it runs), and
// its input's size.
ShardItem shard_item(PluginRegistry& registry, const BatchJob& job) {
    ShardItem item;
    const auto key = [](const fs::path& p) {
        fs::path normal = fs::absolute(p).lexically_normal();
        if (!normal.has_filename()) normal = normal.parent_path();  // out/ and out are one
        return normal.string();
    };
    std::error_code ec;
    if (job.compare) {
        // Its report, or (none) a key of its own; it reads every input.
        const CompareJob files = job.compare_files();
        item.keys.push_back(files.report.empty() ? "compare job at " + job.where
                                                 : key(files.report));
        for (const fs::path& input : files.inputs) {
            const auto size = fs::file_size(input, ec);
            item.weight += ec ? 0 : size;
        }
        return item;
    }
    const Conversion files = job.files();
    try {
        Pipeline pipeline(registry, job.pipeline);
        pipeline.plan(files.input, files.output);
        for (const auto& p : pipeline.outputs()) item.keys.push_back(key(p));
    } catch (const ck::Error&) {
    }
    if (item.keys.empty()) item.keys.push_back(key(files.output));
    const auto size = fs::file_size(files.input, ec);
    item.weight = ec ? 0 : size;
    return item;
}

std::vector<JobState> load_jobs(PluginRegistry& registry, const BatchSettings& settings,
                                std::size_t& jobs_in_list) {
    std::vector<BatchJob> all = parse_jobs(read_jobs_text(settings.jobs_file), settings.jobs_file);
    jobs_in_list = all.size();
    std::vector<unsigned> shard_of(all.size(), 0);
    if (settings.shard && settings.shard->count > 1) {
        std::vector<ShardItem> items;
        for (const auto& job : all) items.push_back(shard_item(registry, job));
        shard_of = assign_shards(items, settings.shard->count);
    }
    std::vector<JobState> jobs;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (settings.shard && shard_of[i] != settings.shard->index) continue;
        jobs.emplace_back();
        jobs.back().job = std::move(all[i]);
        jobs.back().number = i + 1;
    }
    return jobs;
}

// Workers take the next job until none is left or the batch is interrupted, planning each
// first; every finished job gets a progress line on `err` unless the batch is quiet. Jobs never
// started end as not_run.
void run_jobs(PluginRegistry& registry, const BatchSettings& settings, std::vector<JobState>& jobs,
              std::ostream& err) {
    Planner planner(registry, jobs, settings.force);

    std::mutex print;
    std::size_t finished = 0;
    auto report_line = [&](std::size_t index) {
        if (settings.quiet) return;
        const JobState& s = jobs[index];
        std::lock_guard lock(print);
        err << "[" << ++finished << "/" << jobs.size() << "] " << status_name(s.status) << "  "
            << s.job.input.string() << " -> " << s.job.output.string();
        if (s.status == Status::ok) err << "  (" << seconds_text(s.seconds) << ")";
        if (!s.message.empty()) err << ": " << s.message;
        err << "\n";
    };

    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < jobs.size();) {
            if (ck::interrupt_requested()) {
                jobs[i].status = Status::not_run;
                continue;
            }
            planner.plan_through(i);
            if (jobs[i].status == Status::pending) run_job(settings, jobs[i]);
            report_line(i);
        }
    };
    {
        std::vector<std::jthread> workers;
        for (unsigned k = 0; k < std::max(1u, settings.parallel); ++k) workers.emplace_back(worker);
    }
    for (auto& s : jobs)
        if (s.status == Status::pending) s.status = Status::not_run;
    // Every job has ended. A job removes the directories it created when it fails, but not
    // one that another job created and its own file still occupied then (two jobs writing
    // into one new directory, both interrupted): what this run created and left empty goes now.
    ck::remove_empty_directories(planner.new_directories());
}

}  // namespace

void batch_signal_received() noexcept {
    if (signals_received.fetch_add(1) == 0) ck::request_interrupt();
}

int run_batch(PluginRegistry& registry, const BatchSettings& settings, std::ostream& out,
              std::ostream& err) {
    const auto started = std::chrono::steady_clock::now();
    std::size_t jobs_in_list = 0;
    std::vector<JobState> jobs = load_jobs(registry, settings, jobs_in_list);
    run_jobs(registry, settings, jobs, err);

    const std::map<Status, std::size_t> counts = count_statuses(jobs);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const bool interrupted = signals_received.load() > 0;
    if (settings.json || !settings.report_dir.empty()) {
        const json doc = json_report(settings, jobs, jobs_in_list, counts, seconds, interrupted);
        if (!settings.report_dir.empty()) write_report_file(settings, doc);
        if (settings.json) print_json(out, doc);
    }
    if (!settings.json) print_text_report(out, jobs, counts, seconds);
    if (interrupted) return ckhost::interrupted;
    return counts.at(Status::failed) ? failed : ok;
}

}  // namespace ckhost
