// `ckhost batch --shard` and `ckhost batch-report` (issue 17): the split (deterministic,
// whole groups of jobs writing one file, balanced by input size), the array variables of
// `--shard auto` and their refusals, the shard reports and their merge, and --resubmit.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "batch/batch_jobs.hpp"
#include "batch/batch_shard.hpp"
#include "ck/error.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_batch_shard {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

ckhost::EnvLookup env_of(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> const char* {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

ckhost::ShardItem item(std::string key, std::uint64_t weight) {
    return {{std::move(key)}, weight};
}

// The usage error parse_shard throws, or "" when it does not.
std::string refusal(const std::string& text, std::map<std::string, std::string> vars = {}) {
    try {
        ckhost::parse_shard(text, env_of(std::move(vars)));
    } catch (const ck::Error& e) {
        BOOST_TEST((e.kind() == ck::ErrorKind::usage), e.what());
        return e.what();
    }
    return "";
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string sample() {
    return cktest::sample_model().string();
}

json parse_out(const cktest::RunResult& r) {
    return json::parse(r.out, nullptr, false);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_shard)

BOOST_AUTO_TEST_CASE(explicit_shards_and_their_refusals) {
    const auto spec = ckhost::parse_shard("2/5", env_of({}));
    BOOST_TEST(spec.index == 2u);
    BOOST_TEST(spec.count == 5u);
    BOOST_TEST(spec.source == "--shard");
    for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
             {"5/5", "the index must be below the count"},
             {"1", "expected K/N"},
             {"a/2", "expected K/N"},
             {"-1/2", "expected K/N"},
             {"0/0", "expected a shard count from 1"},
             {"0/x", "expected a shard count from 1"},
             {"0/2 ", "expected a shard count from 1"},
             {"0/1000000000", "expected a shard count from 1 to 100000"}})
        BOOST_TEST(contains(refusal(text), expected), text << ": " << refusal(text));
}

BOOST_AUTO_TEST_CASE(auto_reads_each_scheduler) {
    struct Case {
        std::string text;
        std::map<std::string, std::string> vars;
        unsigned index, count;
        std::string source;
    };
    for (const Case& c : std::vector<Case>{
             // Slurm: --array=0-3, --array=1-4 (counted from the first), COUNT alone.
             {"auto",
              {{"SLURM_ARRAY_TASK_ID", "2"},
               {"SLURM_ARRAY_TASK_MIN", "0"},
               {"SLURM_ARRAY_TASK_MAX", "3"},
               {"SLURM_ARRAY_TASK_COUNT", "4"}},
              2,
              4,
              "SLURM_ARRAY_TASK_ID"},
             {"auto",
              {{"SLURM_ARRAY_TASK_ID", "4"},
               {"SLURM_ARRAY_TASK_MIN", "1"},
               {"SLURM_ARRAY_TASK_MAX", "4"}},
              3,
              4,
              "SLURM_ARRAY_TASK_ID"},
             {"auto",
              {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}},
              1,
              3,
              "SLURM_ARRAY_TASK_ID"},
             // Kubernetes and PBS: the count from auto/N or CKHOST_SHARD_COUNT.
             {"auto/8", {{"JOB_COMPLETION_INDEX", "7"}}, 7, 8, "JOB_COMPLETION_INDEX"},
             {"auto",
              {{"JOB_COMPLETION_INDEX", "0"}, {"CKHOST_SHARD_COUNT", "2"}},
              0,
              2,
              "JOB_COMPLETION_INDEX"},
             {"auto/3", {{"PBS_ARRAY_INDEX", "2"}}, 2, 3, "PBS_ARRAY_INDEX"},
             // SGE: -t 1-10:3 gives tasks 1, 4, 7, 10.
             {"auto",
              {{"SGE_TASK_ID", "7"},
               {"SGE_TASK_FIRST", "1"},
               {"SGE_TASK_LAST", "10"},
               {"SGE_TASK_STEPSIZE", "3"}},
              2,
              4,
              "SGE_TASK_ID"},
             // auto/N overrides the scheduler's count.
             {"auto/2",
              {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "9"}},
              1,
              2,
              "SLURM_ARRAY_TASK_ID"},
         }) {
        const auto spec = ckhost::parse_shard(c.text, env_of(c.vars));
        BOOST_TEST(spec.index == c.index, c.source);
        BOOST_TEST(spec.count == c.count, c.source);
        BOOST_TEST(spec.source == c.source);
    }
}

BOOST_AUTO_TEST_CASE(auto_refuses_what_it_cannot_map) {
    for (const auto& [vars, expected] :
         std::vector<std::pair<std::map<std::string, std::string>, std::string>>{
             {{}, "not in an array task"},
             {{{"SGE_TASK_ID", "undefined"}}, "not in an array task"},
             {{{"SLURM_ARRAY_TASK_ID", "x1"}}, "SLURM_ARRAY_TASK_ID=x1: expected a whole number"},
             {{{"SLURM_ARRAY_TASK_ID", "0"}}, "use --shard auto/N"},
             {{{"JOB_COMPLETION_INDEX", "3"}}, "use --shard auto/N"},
             {{{"SLURM_ARRAY_TASK_ID", "4"},
               {"SLURM_ARRAY_TASK_MIN", "0"},
               {"SLURM_ARRAY_TASK_MAX", "6"},
               {"SLURM_ARRAY_TASK_STEP", "2"},
               {"SLURM_ARRAY_TASK_COUNT", "4"}},
              "not a range of consecutive tasks"},
             {{{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "5"}}, "gives task 5 of 5"},
             {{{"SGE_TASK_ID", "2"}, {"SGE_TASK_FIRST", "1"}, {"SGE_TASK_STEPSIZE", "3"}},
              "not one of the array's tasks"},
         })
        BOOST_TEST(contains(refusal("auto", vars), expected), refusal("auto", vars));
    BOOST_TEST(contains(refusal("auto/2", {{"PBS_ARRAY_INDEX", "2"}}), "gives task 2 of 2"));
}

BOOST_AUTO_TEST_CASE(the_split_is_whole_disjoint_balanced_and_order_free) {
    // 40 jobs of mixed sizes; jobs 0-2 and 10 write one file together.
    std::vector<ckhost::ShardItem> items;
    std::mt19937 random(17);
    for (int i = 0; i < 40; ++i)
        items.push_back(item("/out/" + std::to_string(i), 1000 + random() % 100000));
    for (int i : {1, 2, 10}) items[i].keys.push_back("/out/0");
    const auto shards = ckhost::assign_shards(items, 3);
    BOOST_TEST_REQUIRE(shards.size() == items.size());
    for (int i : {1, 2, 10}) BOOST_TEST(shards[i] == shards[0]);
    std::vector<std::uint64_t> load(3, 0);
    for (std::size_t i = 0; i < items.size(); ++i) load[shards[i]] += items[i].weight;
    const std::uint64_t total = std::accumulate(load.begin(), load.end(), std::uint64_t{0});
    const std::uint64_t heaviest = *std::max_element(load.begin(), load.end());
    // LPT: within 4/3 of the ideal (and of the group of four, which cannot be split).
    BOOST_TEST(heaviest * 3 <= total * 4 / 3 + 3 * 200000, heaviest << " of " << total);

    // The same items in another order get the same shards: the split depends on the jobs,
    // not on the line they are on.
    std::vector<std::size_t> order(items.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    std::vector<ckhost::ShardItem> shuffled;
    for (std::size_t i : order) shuffled.push_back(items[i]);
    const auto again = ckhost::assign_shards(shuffled, 3);
    for (std::size_t k = 0; k < order.size(); ++k) BOOST_TEST(again[k] == shards[order[k]]);
}

BOOST_AUTO_TEST_CASE(heavy_jobs_spread_by_size_not_by_line) {
    // Two 100-byte jobs first, then eight 10-byte ones: by line number (round robin) one shard
    // would get both heavy jobs; by size each gets one, plus four light ones.
    std::vector<ckhost::ShardItem> items = {item("a", 100), item("b", 100)};
    for (int i = 0; i < 8; ++i) items.push_back(item("c" + std::to_string(i), 10));
    const auto shards = ckhost::assign_shards(items, 2);
    BOOST_TEST(shards[0] != shards[1]);
    BOOST_TEST(std::count(shards.begin(), shards.end(), 0u) == 5);
    // Weightless jobs (missing inputs) still spread.
    const auto empty = ckhost::assign_shards({item("x", 0), item("y", 0), item("z", 0)}, 3);
    BOOST_TEST((std::set<unsigned>(empty.begin(), empty.end()).size() == 3u));
}

BOOST_AUTO_TEST_CASE(resubmitted_lines_read_back_as_the_same_jobs) {
    const ckhost::Conversion job{"gguf:meta[set=a=\"b c\"]:gguf", "/in/it's a \\ \"model\".gguf",
                                 "/out/# x\ny/"};
    const auto back = ckhost::parse_jobs(ckhost::job_line(job), "todo.txt");
    BOOST_TEST_REQUIRE(back.size() == 1u);
    BOOST_TEST(back[0].pipeline == job.pipeline);
    BOOST_TEST(back[0].input == job.input);
    BOOST_TEST(back[0].output == job.output);
}

// Through the binary: 3 shards of 7 jobs run everything once, keep one output's jobs together,
// write their reports; batch-report merges them, and reports a missing shard's jobs as not run.
BOOST_AUTO_TEST_CASE(shards_run_every_job_once_and_batch_report_merges_them) {
    cktest::TempDir dir;
    fs::create_directory(dir / "out");
    std::string jobs;
    for (const char* name : {"a", "b", "c", "d", "e"})
        jobs += "gguf:gguf " + sample() + " " + (dir / "out" / name).string() + ".gguf\n";
    // Two jobs that write out/micro-llama-q4_k_m.gguf: one slice, where the second fails.
    jobs += "gguf:gguf " + sample() + " " + (dir / "out").string() + "/\n";
    jobs += "gguf:dequant:gguf " + sample() + " " + (dir / "out").string() + "/\n";
    write_text(dir / "jobs.txt", jobs);
    std::map<int, int> ran;  // job number -> times run
    std::map<int, int> shard_of;
    for (const char* k : {"0", "1", "2"}) {
        const auto r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--shard",
                                           std::string(k) + "/3", "--report-dir",
                                           (dir / "reports").string(), "--json", "-q"});
        const json doc = parse_out(r);
        BOOST_TEST_REQUIRE(doc.is_object(), r.out << r.err);
        BOOST_TEST(doc["shard"]["count"].get<int>() == 3);
        BOOST_TEST(doc["shard"]["jobs_in_list"].get<int>() == 7);
        for (const auto& j : doc["jobs"]) {
            ++ran[j["job"].get<int>()];
            shard_of[j["job"].get<int>()] = std::stoi(k);
        }
        // The file is the document printed.
        const auto file =
            cktest::read_file(dir / "reports" / ("shard-" + std::string(k) + ".json"));
        BOOST_TEST(json::parse(file.begin(), file.end())["jobs"] == doc["jobs"]);
    }
    BOOST_TEST(ran.size() == 7u);
    for (const auto& [number, times] : ran) BOOST_TEST(times == 1, number);
    BOOST_TEST(shard_of[6] == shard_of[7]);
    // The same split every time.
    const auto again = parse_out(cktest::run_ckhost(
        {"batch", (dir / "jobs.txt").string(), "--shard", "0/3", "--json", "-q"}));
    for (const auto& j : again["jobs"]) BOOST_TEST(shard_of[j["job"].get<int>()] == 0);

    auto merged = cktest::run_ckhost({"batch-report", (dir / "reports").string(), "--json",
                                      "--resubmit", (dir / "todo.txt").string()});
    BOOST_TEST(merged.exit_code == 1, merged.err);  // job 7 failed
    json doc = parse_out(merged);
    BOOST_TEST(doc["summary"]["ok"].get<int>() == 6, merged.out);
    BOOST_TEST(doc["summary"]["failed"].get<int>() == 1);
    BOOST_TEST(contains(doc["jobs"][6]["error"].get<std::string>(), "is also written by"));
    const auto todo = cktest::read_file(dir / "todo.txt");
    const auto left = ckhost::parse_jobs(std::string(todo.begin(), todo.end()), "todo.txt");
    BOOST_TEST_REQUIRE(left.size() == 1u);
    BOOST_TEST(left[0].pipeline == "gguf:dequant:gguf");

    // A shard that died: its report is missing, its jobs are not run (exit 75 if none failed).
    const int lost = shard_of[1];
    fs::remove(dir / "reports" / ("shard-" + std::to_string(lost) + ".json"));
    merged = cktest::run_ckhost({"batch-report", (dir / "reports").string(), "--json"});
    doc = parse_out(merged);
    BOOST_TEST(doc["shards"]["missing"] == json::array({lost}), merged.out);
    int not_run = 0;
    for (const auto& j : doc["jobs"])
        if (shard_of[j["job"].get<int>()] == lost) {
            BOOST_TEST(j["status"] == "not_run");
            BOOST_TEST(contains(j["reason"].get<std::string>(), "no report from its shard"));
            ++not_run;
        }
    BOOST_TEST(doc["summary"]["not_run"].get<int>() == not_run);
    BOOST_TEST(merged.exit_code == (shard_of[7] == lost ? 75 : 1), merged.out);
    // The text report says the same.
    const auto text = cktest::run_ckhost({"batch-report", (dir / "reports").string()});
    BOOST_TEST(
        contains(text.out, "shards: 2 of 3 reported (missing: " + std::to_string(lost) + ")"),
        text.out);
}

BOOST_AUTO_TEST_CASE(batch_report_refuses_reports_of_another_list) {
    cktest::TempDir dir;
    write_text(dir / "jobs.txt", "gguf:gguf " + sample() + " " + (dir / "a.gguf").string() + "\n");
    BOOST_TEST_REQUIRE(cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--shard", "0/2",
                                           "--report-dir", (dir / "r").string(), "-q"})
                           .exit_code == 0);
    write_text(dir / "other.txt",
               "gguf:gguflite " + sample() + " " + (dir / "a.gguf").string() + "\n");
    auto r = cktest::run_ckhost(
        {"batch-report", (dir / "r").string(), "--jobs-file", (dir / "other.txt").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "the list changed since the shards ran"), r.err);
    r = cktest::run_ckhost({"batch-report", (dir / "none").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "no such directory"), r.err);
    fs::create_directory(dir / "empty");
    r = cktest::run_ckhost({"batch-report", (dir / "empty").string()});
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "no shard reports"), r.err);
    // With the list, an empty DIR means nothing ran.
    r = cktest::run_ckhost(
        {"batch-report", (dir / "empty").string(), "--jobs-file", (dir / "jobs.txt").string()});
    BOOST_TEST(r.exit_code == 75, r.err);
    r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--shard", "3/3"});
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "--shard 3/3: the index must be below the count"), r.err);
    const cktest::ScopedEnv no_array("SLURM_ARRAY_TASK_ID", "abc");
    r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--shard", "auto"});
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "SLURM_ARRAY_TASK_ID=abc"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_batch_shard
