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

}  // namespace

int run_batch_report(const BatchReportSettings& settings, std::ostream& out, std::ostream& err) {
    const fs::path dir = settings.report_dir;
    std::vector<Report> reports;
    for (const auto& [k, path] : report_files(dir)) reports.push_back(load_report(k, path));

    // Every report must come from one split: the same count and the same list.
    std::optional<unsigned> count;
    std::string jobs_file = settings.jobs_file;
    for (const Report& r : reports) {
        const json& shard = r.doc["shard"];
        const unsigned n = shard.value("count", 0u);
        if (count && n != *count)
            throw ck::usage_error(r.path.string() + ": shard " + std::to_string(r.index) + " of " +
                                  std::to_string(n) + ", but " + reports.front().path.string() +
                                  " is of " + std::to_string(*count) +
                                  ": reports of two different runs (clear DIR between runs)");
        count = n;
        if (r.index >= n)
            throw ck::usage_error(r.path.string() + ": shard " + std::to_string(r.index) +
                                  " of only " + std::to_string(n));
        if (settings.jobs_file.empty()) {
            const std::string named = shard.value("jobs_file", "");
            if (!jobs_file.empty() && named != jobs_file)
                throw ck::usage_error(r.path.string() + ": its jobs list is " + named + ", not " +
                                      jobs_file + ": give the one to check with --jobs-file");
            jobs_file = named;
        }
    }
    if (jobs_file.empty())
        throw ck::usage_error(dir.string() +
                              ": no shard reports (shard-K.json) in it; give --jobs-file JOBS to "
                              "list every job as not run");
    if (jobs_file == "-")
        throw ck::usage_error(
            "the shards read their jobs from standard input: give the same "
            "list with --jobs-file JOBS");
    const std::vector<BatchJob> jobs = parse_jobs(read_text(jobs_file, "the jobs file"), jobs_file);

    std::vector<Merged> merged(jobs.size());
    std::vector<unsigned> reported, missing;
    for (const Report& r : reports) {
        reported.push_back(r.index);
        if (r.doc["shard"].value("jobs_in_list", jobs.size()) != jobs.size())
            throw ck::usage_error(r.path.string() + ": written for a list of " +
                                  r.doc["shard"]["jobs_in_list"].dump() + " jobs, but " +
                                  jobs_file + " has " + std::to_string(jobs.size()) +
                                  ": the list changed since the shards ran");
        for (const json& j : r.doc["jobs"]) {
            const std::size_t number = j.value("job", 0u);
            if (number < 1 || number > jobs.size())
                throw ck::usage_error(r.path.string() + ": job " + std::to_string(number) +
                                      " is not in " + jobs_file);
            const BatchJob& job = jobs[number - 1];
            if (j.value("pipeline", "") != job.pipeline ||
                j.value("input", "") != job.input.string() ||
                j.value("output", "") != job.output.string())
                throw ck::usage_error(r.path.string() + ": job " + std::to_string(number) +
                                      " is not " + job.where +
                                      "'s job: the list changed since the shards ran");
            Merged m;
            m.status = j.value("status", "not_run");
            m.shard = r.index;
            m.exit_code = j.value("exit_code", json());
            m.seconds = j.value("seconds", 0.0);
            if (m.status == "failed") m.error = j.value("error", "");
            if (m.status == "skipped") m.reason = j.value("reason", "up to date");
            if (m.status == "interrupted")
                m.reason = "interrupted (shard " + std::to_string(r.index) + ")";
            if (m.status == "not_run")
                m.reason = "not started: shard " + std::to_string(r.index) + " stopped first";
            if (m.status == "interrupted") m.status = "not_run";
            // A job two reports hold (a list edited between runs): the one that finished wins.
            Merged& slot = merged[number - 1];
            if (!slot.shard || (!done(slot.status) && done(m.status)) ||
                (slot.status == "not_run" && m.status == "failed"))
                slot = m;
        }
    }
    if (count)
        for (unsigned k = 0; k < *count; ++k)
            if (!std::binary_search(reported.begin(), reported.end(), k)) missing.push_back(k);
    for (Merged& m : merged)
        if (!m.shard)
            m.reason = missing.empty()
                           ? "in no shard's report"
                           : "no report from its shard (missing: " + list_text(missing) + ")";

    std::map<std::string, std::size_t> totals = {
        {"ok", 0}, {"skipped", 0}, {"failed", 0}, {"not_run", 0}};
    for (const Merged& m : merged) ++totals[m.status];

    std::string todo;
    std::size_t todo_count = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i)
        if (!done(merged[i].status)) {
            todo += job_line(jobs[i]);
            ++todo_count;
        }
    if (!settings.resubmit.empty()) {
        // Atomically, like every ckhost output: a driver that reads it never sees half a list.
        ck::OutputSet set(true);
        set.set_sync(settings.sync);
        set.create(settings.resubmit).write(todo.data(), todo.size());
        set.commit();
    }

    const int status = totals["failed"] ? failed : totals["not_run"] ? jobs_not_run : ok;
    if (settings.json) {
        json list = json::array();
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const Merged& m = merged[i];
            json j = {{"job", i + 1},
                      {"where", jobs[i].where},
                      {"pipeline", jobs[i].pipeline},
                      {"input", jobs[i].input.string()},
                      {"output", jobs[i].output.string()},
                      {"status", m.status},
                      {"shard", m.shard ? json(*m.shard) : json(nullptr)},
                      {"exit_code", m.exit_code},
                      {"seconds", m.seconds}};
            if (m.status == "failed") j["error"] = m.error;
            if (!m.reason.empty()) j["reason"] = m.reason;
            list.push_back(j);
        }
        json summary = {{"jobs", jobs.size()}};
        for (const auto& [name, n] : totals) summary[name] = n;
        json doc = json_document("batch-report", status == ok);
        doc.update(
            {{"report_dir", settings.report_dir},
             {"jobs_file", jobs_file},
             {"exit_code", status},
             {"shards",
              {{"count", count ? json(*count) : json(nullptr)},
               {"reported", reported},
               {"missing", missing}}},
             {"summary", summary},
             {"resubmit", settings.resubmit.empty() ? json(nullptr) : json(settings.resubmit)},
             {"jobs", list}});
        print_json(out, doc);
    } else {
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const Merged& m = merged[i];
            if (done(m.status)) continue;
            out << std::left << std::setw(8) << m.status << std::right << "  " << jobs[i].where
                << "  " << jobs[i].pipeline << "  " << jobs[i].input.string() << " -> "
                << jobs[i].output.string() << "\n"
                << "          " << (m.status == "failed" ? "error: " + m.error : m.reason) << "\n";
        }
        out << jobs.size() << " jobs: " << totals["ok"] << " ok, " << totals["skipped"]
            << " skipped, " << totals["failed"] << " failed, " << totals["not_run"]
            << " not run; shards: " << reported.size() << " of "
            << (count ? std::to_string(*count) : std::string("?")) << " reported";
        if (!missing.empty()) out << " (missing: " << list_text(missing) << ")";
        out << "\n";
    }
    if (!settings.resubmit.empty())
        err << todo_count << " job" << (todo_count == 1 ? "" : "s") << " still to do written to "
            << settings.resubmit << "\n";
    return status;
}

}  // namespace ckhost
