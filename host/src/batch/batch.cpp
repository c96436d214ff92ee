#include "batch/batch.hpp"

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

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {
namespace {

std::atomic<int> signals_received{0};

enum class Status { pending, ok, skipped, failed, interrupted, not_run };

// The names --json and the table print, in Status order.
constexpr std::array<std::string_view, 6> status_names = {"pending", "ok",          "skipped",
                                                          "failed",  "interrupted", "not_run"};

std::string status_name(Status s) {
    return std::string(ck::enum_name(status_names, s, "?"));
}

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

  private:
    void plan(JobState& s) {
        try {
            Pipeline pipeline(registry_, s.job.pipeline);
            pipeline.plan(s.job.input, s.job.output);
            s.outputs = pipeline.outputs();
            if (!force_) s.freshness = check_recipe(pipeline.recipe(s.job.input), s.outputs);
        } catch (const ck::Error& e) {
            s.status = Status::failed;
            s.exit_code = exit_code_for(e.kind());
            s.message = e.what();
            return;
        }
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
};

std::vector<std::string> job_command(const BatchSettings& settings, const BatchJob& job) {
    std::vector<std::string> args = {boost::dll::program_location().string(),
                                     "convert",
                                     "--pipeline=" + job.pipeline,
                                     "--input=" + job.input.string(),
                                     "--output=" + job.output.string(),
                                     "--json",
                                     "--quiet",
                                     "--update"};
    // --force converts whatever the record says; --update still records the recipe.
    if (settings.force) args.push_back("--force");
    for (const auto& dir : settings.plugin_dirs) args.push_back("--plugin-dir=" + dir);
    if (!settings.sync) args.push_back("--no-sync");
    if (!settings.isa.empty()) args.push_back("--isa=" + settings.isa);
    // The batch's threads shared between the jobs running at once, so that --jobs never
    // oversubscribes the machine: 8 threads and --jobs 3 give each job 2.
    const unsigned jobs = std::max(1u, settings.parallel);
    const unsigned share = std::max(1u, settings.threads / jobs);
    args.push_back("--threads=" + std::to_string(share));
    if (settings.max_memory)
        args.push_back("--max-memory=" +
                       std::to_string(std::max<std::uint64_t>(1, settings.max_memory / jobs)));
    return args;
}

// The job's error message: ckhost's "ckhost: error: ..." line(s), else whatever it printed.
std::string error_text(const std::string& err) {
    std::istringstream lines(err);
    std::string line, found;
    const std::string prefix = "ckhost: error: ";
    while (std::getline(lines, line))
        if (line.rfind(prefix, 0) == 0)
            found += (found.empty() ? "" : "; ") + line.substr(prefix.size());
    if (!found.empty()) return found;
    std::string all = err;
    while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
    return all;
}

void run_job(const BatchSettings& settings, JobState& s) {
    const auto started = std::chrono::steady_clock::now();
    ChildOutcome child;
    try {
        child = run_child(job_command(settings, s.job), {"CKHOST_BATCH_JOB=1"}, [] {
            const int n = signals_received.load();
            return n == 0 ? 0 : n == 1 ? SIGINT : SIGKILL;
        });
    } catch (const ck::Error& e) {
        s.status = Status::failed;
        s.message = e.what();
        return;
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    s.report = json::parse(child.out, nullptr, false);
    if (s.report.is_discarded()) s.report = nullptr;
    if (child.signal) {
        s.status = signals_received ? Status::interrupted : Status::failed;
        s.message = std::string("ended by signal ") + std::to_string(child.signal) + " (" +
                    ::strsignal(child.signal) + ")";
        // A job killed outright (SIGKILL: the out-of-memory killer, a scheduler's time limit)
        // could not remove its temporary files. It has been waited for, so its files are
        // certainly stale: remove them now rather than at the next run.
        for (const ck::StaleTemporary& stale : ck::remove_stale_temporaries(s.outputs))
            s.message += "; removed its temporary file " + stale.path.string();
        return;
    }
    s.exit_code = child.exit_code;
    if (child.exit_code == 0) {
        s.status = s.report.is_object() && s.report.value("up_to_date", false) ? Status::skipped
                                                                               : Status::ok;
        if (s.status == Status::skipped) s.message = "up to date";
        // Outputs were there but not trusted: say why they were made again.
        if (s.status == Status::ok && s.report.is_object() && s.report.contains("update_reason") &&
            s.freshness.reason != no_output_yet)
            s.message = "converted again: " + s.report["update_reason"].get<std::string>();
    } else {
        s.status = child.exit_code == interrupted ? Status::interrupted : Status::failed;
        s.message = error_text(child.err);
    }
}

std::string seconds_text(double seconds) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << seconds << " s";
    return s.str();
}

json job_json(const JobState& s) {
    json outputs = json::array();
    for (const auto& p : s.outputs) outputs.push_back(p.string());
    json j = {{"job", s.number},
              {"where", s.job.where},
              {"pipeline", s.job.pipeline},
              {"input", s.job.input.string()},
              {"output", s.job.output.string()},
              {"outputs", outputs},
              {"status", status_name(s.status)},
              {"seconds", s.seconds}};
    j["exit_code"] = s.exit_code ? json(*s.exit_code) : json(nullptr);
    // Why it was skipped or converted again is a reason; anything else said is an error.
    if (!s.message.empty())
        j[s.status == Status::skipped || s.status == Status::ok ? "reason" : "error"] = s.message;
    if (!s.report.is_null()) j["report"] = s.report;
    return j;
}

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
    try {
        Pipeline pipeline(registry, job.pipeline);
        pipeline.plan(job.input, job.output);
        for (const auto& p : pipeline.outputs()) item.keys.push_back(key(p));
    } catch (const ck::Error&) {
    }
    if (item.keys.empty()) item.keys.push_back(key(job.output));
    std::error_code ec;
    const auto size = fs::file_size(job.input, ec);
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
}

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
