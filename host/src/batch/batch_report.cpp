#include "batch/batch_report.hpp"

#include <string.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "batch/batch_jobs.hpp"
#include "ck/error.hpp"
#include "ck/output.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ckhost {
namespace {

std::string read_text(const fs::path& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ck::Error("cannot read " + what + ": " + ::strerror(errno), path.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// DIR/shard-K.json for every K, by K. Other files (the temporary file of a report being
// written, notes) are left alone.
std::map<unsigned, fs::path> report_files(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw ck::Error(fs::exists(dir, ec) ? "not a directory" : "no such directory",
                        dir.string());
    std::map<unsigned, fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (name.size() <= 11 || name.rfind("shard-", 0) != 0 ||
            name.substr(name.size() - 5) != ".json")
            continue;
        unsigned k = 0;
        const char* first = name.data() + 6;
        const char* last = name.data() + name.size() - 5;
        const auto [end, errc] = std::from_chars(first, last, k);
        if (errc == std::errc() && end == last) files[k] = entry.path();
    }
    return files;
}

struct Report {
    unsigned index = 0;
    fs::path path;
    json doc;
};

// A shard report as `ckhost batch --report-dir` writes it; anything else is refused by name.
Report load_report(unsigned k, const fs::path& path) {
    Report r{k, path, json::parse(read_text(path, "the shard report"), nullptr, false)};
    const json& d = r.doc;
    if (!d.is_object() || d.value("command", "") != "batch" || !d.contains("jobs") ||
        !d["jobs"].is_array() || !d.contains("shard") || !d["shard"].is_object())
        throw ck::Error("not a shard report of ckhost batch --report-dir", path.string());
    const json& shard = d["shard"];
    if (shard.value("index", -1) != static_cast<long>(k))
        throw ck::Error("its shard index is " + shard.value("index", json()).dump() + ", not " +
                            std::to_string(k) + " as its name says",
                        path.string());
    return r;
}

// A job's merged state: its status in the report that has it, or not_run with the reason.
struct Merged {
    std::string status = "not_run";
    std::optional<unsigned> shard;
    std::string error;   // failed
    std::string reason;  // skipped, not_run
    json exit_code = nullptr;
    double seconds = 0;
};

bool done(const std::string& status) {
    return status == "ok" || status == "skipped";
}

std::string list_text(const std::vector<unsigned>& numbers) {
    std::string out;
    for (unsigned n : numbers) out += (out.empty() ? "" : ", ") + std::to_string(n);
    return out;
}

// Everything the reports say together, built step by step by run_batch_report.
struct ShardMerge {
    std::vector<Report> reports;
    std::optional<unsigned> count;  // the shards of the split; none without any report
    std::string jobs_file;
    std::vector<BatchJob> jobs;
    std::vector<Merged> merged;  // one a job, in the list's order
    std::vector<unsigned> reported, missing;
    std::map<std::string, std::size_t> totals;
};

// Every report must come from one split: the same count and the same list. Which list that is
// comes from --jobs-file, else from the reports themselves.
void check_one_split(const BatchReportSettings& settings, ShardMerge& m) {
    m.jobs_file = settings.jobs_file;
    for (const Report& r : m.reports) {
        const json& shard = r.doc["shard"];
        const unsigned n = shard.value("count", 0u);
        if (m.count && n != *m.count)
            throw ck::usage_error(r.path.string() + ": shard " + std::to_string(r.index) + " of " +
                                  std::to_string(n) + ", but " + m.reports.front().path.string() +
                                  " is of " + std::to_string(*m.count) +
                                  ": reports of two different runs (clear DIR between runs)");
        m.count = n;
        if (r.index >= n)
            throw ck::usage_error(r.path.string() + ": shard " + std::to_string(r.index) +
                                  " of only " + std::to_string(n));
        if (settings.jobs_file.empty()) {
            const std::string named = shard.value("jobs_file", "");
            if (!m.jobs_file.empty() && named != m.jobs_file)
                throw ck::usage_error(r.path.string() + ": its jobs list is " + named + ", not " +
                                      m.jobs_file + ": give the one to check with --jobs-file");
            m.jobs_file = named;
        }
    }
    if (m.jobs_file.empty())
        throw ck::usage_error(settings.report_dir +
                              ": no shard reports (shard-K.json) in it; give --jobs-file JOBS to "
                              "list every job as not run");
    if (m.jobs_file == "-")
        throw ck::usage_error(
            "the shards read their jobs from standard input: give the same "
            "list with --jobs-file JOBS");
}

// One job line of shard `shard`'s report, in the merged terms: an interrupted job is one still
// to run, and every job not done says why.
Merged merged_job_state(const json& j, unsigned shard) {
    Merged m;
    m.status = j.value("status", "not_run");
    m.shard = shard;
    m.exit_code = j.value("exit_code", json());
    m.seconds = j.value("seconds", 0.0);
    if (m.status == "failed") m.error = j.value("error", "");
    if (m.status == "skipped") m.reason = j.value("reason", "up to date");
    if (m.status == "interrupted") m.reason = "interrupted (shard " + std::to_string(shard) + ")";
    if (m.status == "not_run")
        m.reason = "not started: shard " + std::to_string(shard) + " stopped first";
    if (m.status == "interrupted") m.status = "not_run";
    return m;
}

// A report's jobs into the merge, each checked against the list it claims to be from: a list
// edited since the shards ran would pair results with the wrong jobs.
void merge_shard_report(const Report& r, ShardMerge& m) {
    m.reported.push_back(r.index);
    if (r.doc["shard"].value("jobs_in_list", m.jobs.size()) != m.jobs.size())
        throw ck::usage_error(r.path.string() + ": written for a list of " +
                              r.doc["shard"]["jobs_in_list"].dump() + " jobs, but " + m.jobs_file +
                              " has " + std::to_string(m.jobs.size()) +
                              ": the list changed since the shards ran");
    for (const json& j : r.doc["jobs"]) {
        const std::size_t number = j.value("job", 0u);
        if (number < 1 || number > m.jobs.size())
            throw ck::usage_error(r.path.string() + ": job " + std::to_string(number) +
                                  " is not in " + m.jobs_file);
        const BatchJob& job = m.jobs[number - 1];
        if (j.value("pipeline", "") != job.pipeline || j.value("input", "") != job.input.string() ||
            j.value("output", "") != job.output.string())
            throw ck::usage_error(r.path.string() + ": job " + std::to_string(number) + " is not " +
                                  job.where + "'s job: the list changed since the shards ran");
        const Merged state = merged_job_state(j, r.index);
        // A job two reports hold (a list edited between runs): the one that finished wins.
        Merged& slot = m.merged[number - 1];
        if (!slot.shard || (!done(slot.status) && done(state.status)) ||
            (slot.status == "not_run" && state.status == "failed"))
            slot = state;
    }
}

// The shards that wrote no report, the reason of every job no report holds, and the totals.
void note_missing_shards(ShardMerge& m) {
    if (m.count)
        for (unsigned k = 0; k < *m.count; ++k)
            if (!std::binary_search(m.reported.begin(), m.reported.end(), k))
                m.missing.push_back(k);
    for (Merged& job : m.merged)
        if (!job.shard)
            job.reason = m.missing.empty()
                             ? "in no shard's report"
                             : "no report from its shard (missing: " + list_text(m.missing) + ")";
    m.totals = {{"ok", 0}, {"skipped", 0}, {"failed", 0}, {"not_run", 0}};
    for (const Merged& job : m.merged) ++m.totals[job.status];
}

// The jobs not done, written to --resubmit FILE when given; how many they are.
std::size_t write_jobs_to_do(const BatchReportSettings& settings, const ShardMerge& m) {
    std::string todo;
    std::size_t todo_count = 0;
    // The list is read back relative to its own folder, which need not be the jobs file's.
    const fs::path folder = fs::path(settings.resubmit).parent_path();
    for (std::size_t i = 0; i < m.jobs.size(); ++i)
        if (!done(m.merged[i].status)) {
            todo += job_line(job_seen_from(m.jobs[i], folder));
            ++todo_count;
        }
    if (!settings.resubmit.empty()) {
        // Atomically, like every ckhost output: a driver that reads it never sees half a list.
        ck::OutputSet set(true);
        set.set_sync(settings.sync);
        set.create(settings.resubmit).write(todo.data(), todo.size());
        set.commit();
    }
    return todo_count;
}

void print_merge_json(const BatchReportSettings& settings, const ShardMerge& m, int status,
                      std::ostream& out) {
    json list = json::array();
    for (std::size_t i = 0; i < m.jobs.size(); ++i) {
        const Merged& job = m.merged[i];
        json j = {{"job", i + 1},
                  {"where", m.jobs[i].where},
                  {"pipeline", m.jobs[i].pipeline},
                  {"input", m.jobs[i].input.string()},
                  {"output", m.jobs[i].output.string()},
                  {"status", job.status},
                  {"shard", job.shard ? json(*job.shard) : json(nullptr)},
                  {"exit_code", job.exit_code},
                  {"seconds", job.seconds}};
        if (job.status == "failed") j["error"] = job.error;
        if (!job.reason.empty()) j["reason"] = job.reason;
        list.push_back(j);
    }
    json summary = {{"jobs", m.jobs.size()}};
    for (const auto& [name, n] : m.totals) summary[name] = n;
    json doc = json_document("batch-report", status == ok);
    doc.update({{"report_dir", settings.report_dir},
                {"jobs_file", m.jobs_file},
                {"exit_code", status},
                {"shards",
                 {{"count", m.count ? json(*m.count) : json(nullptr)},
                  {"reported", m.reported},
                  {"missing", m.missing}}},
                {"summary", summary},
                {"resubmit", settings.resubmit.empty() ? json(nullptr) : json(settings.resubmit)},
                {"jobs", list}});
    print_json(out, doc);
}

// The jobs not done, two lines each, then the totals.
void print_merge_text(const ShardMerge& m, std::ostream& out) {
    for (std::size_t i = 0; i < m.jobs.size(); ++i) {
        const Merged& job = m.merged[i];
        if (done(job.status)) continue;
        out << std::left << std::setw(8) << job.status << std::right << "  " << m.jobs[i].where
            << "  " << m.jobs[i].pipeline << "  " << m.jobs[i].input.string() << " -> "
            << m.jobs[i].output.string() << "\n"
            << "          " << (job.status == "failed" ? "error: " + job.error : job.reason)
            << "\n";
    }
    out << m.jobs.size() << " jobs: " << m.totals.at("ok") << " ok, " << m.totals.at("skipped")
        << " skipped, " << m.totals.at("failed") << " failed, " << m.totals.at("not_run")
        << " not run; shards: " << m.reported.size() << " of "
        << (m.count ? std::to_string(*m.count) : std::string("?")) << " reported";
    if (!m.missing.empty()) out << " (missing: " << list_text(m.missing) << ")";
    out << "\n";
}

}  // namespace

// Read, check, merge, then say: the reports are all checked before anything is written, so a
// report that does not belong leaves no half-written --resubmit list behind.
int run_batch_report(const BatchReportSettings& settings, std::ostream& out, std::ostream& err) {
    ShardMerge m;
    for (const auto& [k, path] : report_files(settings.report_dir))
        m.reports.push_back(load_report(k, path));
    check_one_split(settings, m);
    m.jobs = parse_jobs(read_text(m.jobs_file, "the jobs file"), m.jobs_file);
    m.merged.resize(m.jobs.size());
    for (const Report& r : m.reports) merge_shard_report(r, m);
    note_missing_shards(m);
    const std::size_t todo_count = write_jobs_to_do(settings, m);

    const int status = m.totals.at("failed") ? failed : m.totals.at("not_run") ? jobs_not_run : ok;
    if (settings.json)
        print_merge_json(settings, m, status, out);
    else
        print_merge_text(m, out);
    if (!settings.resubmit.empty())
        err << todo_count << " job" << (todo_count == 1 ? "" : "s") << " still to do written to "
            << settings.resubmit << "\n";
    return status;
}

}  // namespace ckhost
