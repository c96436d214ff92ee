// `ckhost batch` (cli.md): failing jobs do not stop the others, reruns skip what is up to date,
// parallel runs give the same bytes as serial ones, and Ctrl-C leaves nothing behind.
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <tuple>

#include <nlohmann/json.hpp>

#include "batch/batch_jobs.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_batch {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}
std::string bad_input() {
    return (cktest::test_data() / "bad" / "alignment_0.gguf").string();
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// Four good jobs and two that fail: an unknown stage and a malformed GGUF from bad/.
std::string six_jobs(const fs::path& out) {
    const std::string o = out.string() + "/";
    return "# four good jobs, two bad ones\n"
           "gguf:headpack:bump " +
           sample() + " " + o +
           "a/\n"
           "gguf:gguf " +
           sample() + " " + o +
           "b.gguf\n"
           "\n"
           "   gguf:gguflite " +
           sample() + " " + o +
           "c.gguflite\n"
           "gguf:nosuch:bump " +
           sample() + " " + o +
           "d/\n"
           "gguf:gguf " +
           bad_input() + " " + o +
           "e.gguf\n"
           "gguf:dequant[to=f16]:gguf '" +
           sample() + "' '" + o + "f g.gguf'\n";
}

// Each job's outputs and its recipe record (OUTPUT.ckhost.json: what --update compares).
const std::vector<std::string> six_jobs_outputs = {
    "a",        "a/config.json",       "a/weights.bump", "a/weights.bump.ckhost.json",
    "b.gguf",   "b.gguf.ckhost.json",  "c.gguflite",     "c.gguflite.ckhost.json",
    "f g.gguf", "f g.gguf.ckhost.json"};

std::vector<std::string> sorted_entries(const cktest::TempDir& dir, const std::string& sub) {
    std::vector<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(dir / sub))
        names.push_back(fs::relative(e.path(), dir / sub).string());
    std::sort(names.begin(), names.end());
    return names;
}

struct Batch {
    cktest::RunResult run;
    json doc;
};

Batch run_batch(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"batch"};
    all.insert(all.end(), args.begin(), args.end());
    all.push_back("--json");
    Batch b{cktest::run_ckhost(all), nullptr};
    b.doc = json::parse(b.run.out, nullptr, false);
    return b;
}

std::vector<std::string> statuses(const json& doc) {
    std::vector<std::string> out;
    for (const auto& job : doc["jobs"]) out.push_back(job["status"].get<std::string>());
    return out;
}

// The processes whose parent is `pid` (from /proc/*/stat: "pid (comm) state ppid ...").
std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    for (const auto& e : fs::directory_iterator("/proc")) {
        std::ifstream stat(e.path() / "stat");
        std::string text;
        if (!std::getline(stat, text)) continue;
        const auto close = text.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(text.substr(close + 2));
        char state = 0;
        pid_t parent = 0;
        rest >> state >> parent;
        if (parent == pid) out.push_back(std::stoi(e.path().filename().string()));
    }
    return out;
}

std::map<std::string, fs::file_time_type> times_of(const fs::path& dir) {
    std::map<std::string, fs::file_time_type> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out[e.path().string()] = fs::last_write_time(e.path());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(batch)

BOOST_AUTO_TEST_CASE(two_failing_jobs_do_not_stop_the_four_others) {
    cktest::TempDir dir;
    fs::create_directory(dir / "out");
    write_text(dir / "jobs.txt", six_jobs(dir / "out"));
    Batch b = run_batch({(dir / "jobs.txt").string(), "--jobs", "2"});
    BOOST_TEST(b.run.exit_code == 1, b.run.err);
    BOOST_TEST_REQUIRE(b.doc.is_object(), b.run.out);
    BOOST_TEST(
        statuses(b.doc) == (std::vector<std::string>{"ok", "ok", "ok", "failed", "failed", "ok"}),
        b.run.out);
    BOOST_TEST(b.doc["summary"]["ok"].get<int>() == 4);
    BOOST_TEST(b.doc["summary"]["failed"].get<int>() == 2);

    const json& unknown = b.doc["jobs"][3];
    BOOST_TEST(unknown["exit_code"].get<int>() == 2);
    BOOST_TEST(contains(unknown["error"].get<std::string>(), "unknown stage 'nosuch'"));
    BOOST_TEST(contains(unknown["where"].get<std::string>(), "jobs.txt:6"));
    const json& malformed = b.doc["jobs"][4];
    BOOST_TEST(malformed["exit_code"].get<int>() == 1);
    BOOST_TEST(contains(malformed["error"].get<std::string>(), "alignment_0.gguf"));
    BOOST_TEST(contains(malformed["error"].get<std::string>(), "general.alignment"));

    // Exactly the four outputs: nothing from the failed jobs, no temporary files.
    BOOST_TEST(sorted_entries(dir, "out") == six_jobs_outputs, b.run.out);
    // Each job ran its own pipeline: gguf:gguf reproduces a ggml-written file byte for byte.
    BOOST_TEST(cktest::files_equal(dir / "out" / "b.gguf", sample()));
    BOOST_TEST(b.doc["jobs"][0]["report"]["outputs"].size() == 2u);
    // One progress line per job on stderr.
    BOOST_TEST(contains(b.run.err, "[6/6]"), b.run.err);
}

BOOST_AUTO_TEST_CASE(a_rerun_skips_jobs_whose_outputs_are_newer_and_force_redoes_them) {
    cktest::TempDir dir;
    fs::create_directory(dir / "out");
    write_text(dir / "jobs.txt", six_jobs(dir / "out"));
    BOOST_TEST_REQUIRE(run_batch({(dir / "jobs.txt").string()}).run.exit_code == 1);
    const auto before = times_of(dir / "out");

    Batch again = run_batch({(dir / "jobs.txt").string(), "--jobs", "2"});
    BOOST_TEST(again.run.exit_code == 1, again.run.err);  // the two bad jobs still fail
    BOOST_TEST(statuses(again.doc) == (std::vector<std::string>{"skipped", "skipped", "skipped",
                                                                "failed", "failed", "skipped"}),
               again.run.out);
    BOOST_TEST(again.doc["jobs"][0]["reason"].get<std::string>() == "up to date");
    BOOST_TEST((times_of(dir / "out") == before));  // nothing was rewritten

    Batch forced = run_batch({(dir / "jobs.txt").string(), "--force"});
    BOOST_TEST(forced.run.exit_code == 1);
    BOOST_TEST(forced.doc["summary"]["ok"].get<int>() == 4, forced.run.out);
    BOOST_TEST(sorted_entries(dir, "out") == six_jobs_outputs);
}

BOOST_AUTO_TEST_CASE(an_output_older_than_its_input_is_rebuilt) {
    cktest::TempDir dir;
    fs::copy_file(sample(), dir / "model.gguf");
    write_text(dir / "jobs.txt", "gguf:gguf " + (dir / "model.gguf").string() + " " +
                                     (dir / "copy.gguf").string() + "\n");
    BOOST_TEST_REQUIRE(run_batch({(dir / "jobs.txt").string()}).run.exit_code == 0);
    // The input changed after the output was made.
    fs::last_write_time(dir / "copy.gguf",
                        fs::last_write_time(dir / "model.gguf") - std::chrono::hours(1));
    Batch b = run_batch({(dir / "jobs.txt").string()});
    BOOST_TEST(b.run.exit_code == 0, b.run.err);
    BOOST_TEST(statuses(b.doc) == std::vector<std::string>{"ok"}, b.run.out);
    BOOST_TEST((fs::last_write_time(dir / "copy.gguf") > fs::last_write_time(dir / "model.gguf")));
}

BOOST_AUTO_TEST_CASE(two_jobs_in_parallel_write_the_same_bytes_as_one_at_a_time) {
    cktest::TempDir dir;
    fs::create_directory(dir / "serial");
    fs::create_directory(dir / "parallel");
    write_text(dir / "serial.txt", six_jobs(dir / "serial"));
    write_text(dir / "parallel.txt", six_jobs(dir / "parallel"));
    BOOST_TEST(run_batch({(dir / "serial.txt").string(), "--jobs", "1"}).run.exit_code == 1);
    BOOST_TEST(run_batch({(dir / "parallel.txt").string(), "--jobs", "2"}).run.exit_code == 1);
    const auto names = sorted_entries(dir, "serial");
    BOOST_TEST_REQUIRE(names == sorted_entries(dir, "parallel"));
    // The models; not their recipe records, which name their own paths and times.
    for (const auto& name : names)
        if (fs::is_regular_file(dir / "serial" / name) && !name.ends_with(".ckhost.json"))
            BOOST_TEST(cktest::files_equal(dir / "serial" / name, dir / "parallel" / name), name);
}

// --jobs J shares the batch's threads between the jobs running at once: 6 threads and 3 jobs
// give each job 2 (its report says so); more jobs than threads still give each job one.
BOOST_AUTO_TEST_CASE(jobs_share_the_batch_threads) {
    for (const auto& [threads, jobs, each] :
         {std::tuple{"6", "3", 2}, std::tuple{"2", "4", 1}, std::tuple{"5", "1", 5}}) {
        cktest::TempDir dir;
        write_text(dir / "jobs.txt", "gguf:gguf " + sample() + " " + (dir / "a.gguf").string() +
                                         "\ngguf:gguf " + sample() + " " +
                                         (dir / "b.gguf").string() + "\n");
        const Batch b =
            run_batch({(dir / "jobs.txt").string(), "--jobs", jobs, "--threads", threads});
        BOOST_TEST_REQUIRE(b.run.exit_code == 0, b.run.err);
        for (const auto& job : b.doc["jobs"])
            BOOST_TEST(job["report"]["threads"].get<int>() == each, threads << "/" << jobs);
    }
}

BOOST_AUTO_TEST_CASE(the_text_summary_lists_every_job) {
    cktest::TempDir dir;
    fs::create_directory(dir / "out");
    write_text(dir / "jobs.txt", six_jobs(dir / "out"));
    auto r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.out, "6 jobs: 4 ok, 0 skipped, 2 failed"), r.out);
    BOOST_TEST(contains(r.out, "error: unknown stage 'nosuch'"), r.out);
    for (int line : {2, 3, 5, 6, 7, 8})
        BOOST_TEST(contains(r.out, "jobs.txt:" + std::to_string(line) + " "), line);
    // The bump job's warning (the untied output.weight it drops) is shown with its job.
    BOOST_TEST(contains(r.out, "warning: bump: untied output.weight is dropped"), r.out);
}

BOOST_AUTO_TEST_CASE(jobs_come_as_json_on_standard_input) {
    cktest::TempDir dir;
    json jobs = json::array(
        {{{"pipeline", "gguf:gguf"}, {"input", sample()}, {"output", (dir / "a.gguf").string()}},
         {{"pipeline", "gguf:gguflite"},
          {"input", sample()},
          {"output", (dir / "b.gguflite").string()}}});
    auto r = cktest::run_ckhost_with_stdin({"batch", "-", "--json"}, jobs.dump());
    BOOST_TEST(r.exit_code == 0, r.err);
    json doc = json::parse(r.out);
    BOOST_TEST(statuses(doc) == (std::vector<std::string>{"ok", "ok"}));
    BOOST_TEST(doc["jobs"][1]["where"].get<std::string>() == "-: job 2");
    BOOST_TEST(cktest::files_equal(dir / "a.gguf", sample()));
    BOOST_TEST(fs::exists(dir / "b.gguflite"));
}

BOOST_AUTO_TEST_CASE(a_malformed_jobs_file_runs_nothing) {
    struct Case {
        std::string text, expected;
    };
    cktest::TempDir dir;
    const std::string good = "gguf:gguf " + sample() + " " + (dir / "out" / "a.gguf").string();
    for (const Case& c : {
             Case{good + "\ngguf:gguf " + sample() + "\n",
                  "jobs.txt:2: expected PIPELINE INPUT OUTPUT, found 2 fields"},
             Case{good + "\ngguf:gguf 'unterminated " + sample() + " x.gguf\n", "jobs.txt:2"},
             Case{"[{\"pipeline\": \"gguf:gguf\", \"input\": \"" + sample() +
                      "\", \"outptu\": \"x.gguf\"}]",
                  "jobs.txt: job 1: unknown key 'outptu'"},
             Case{"[{\"pipeline\": \"gguf:gguf\", \"input\": \"" + sample() + "\"}]",
                  "jobs.txt: job 1: missing 'output'"},
             Case{"[{\"pipeline\": \"gguf:gguf\",", "not valid JSON"},
             // A number no double holds is nlohmann's out_of_range, not a parse_error (found
             // by fuzz_batch_jobs; it was exit 1 with the library's bare message).
             Case{"[999999999e999999999999999]", "jobs.txt: not valid JSON"},
         }) {
        write_text(dir / "jobs.txt", c.text);
        auto r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string()});
        BOOST_TEST(r.exit_code == 2, c.expected);
        BOOST_TEST(contains(r.err, c.expected), r.err);
        BOOST_TEST(!fs::exists(dir / "out"));
    }
    auto missing = cktest::run_ckhost({"batch", (dir / "none.txt").string()});
    BOOST_TEST(missing.exit_code == 1);
    BOOST_TEST(contains(missing.err, "cannot read the jobs file"), missing.err);
    auto zero = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--jobs", "0"});
    BOOST_TEST(zero.exit_code == 2);
    BOOST_TEST(contains(zero.err, "--jobs 0"), zero.err);
}

BOOST_AUTO_TEST_CASE(two_jobs_writing_one_file_fail_the_second) {
    cktest::TempDir dir;
    // The gguf writer puts out/ + the input's stem: both jobs would write out/micro-llama...
    const std::string out = (dir / "out").string() + "/";
    write_text(dir / "jobs.txt", "gguf:gguf " + sample() + " " + out + "\n" + "gguf:dequant:gguf " +
                                     sample() + " " + out + "\n");
    Batch b = run_batch({(dir / "jobs.txt").string(), "--jobs", "2"});
    BOOST_TEST(b.run.exit_code == 1);
    BOOST_TEST(statuses(b.doc) == (std::vector<std::string>{"ok", "failed"}), b.run.out);
    BOOST_TEST(
        contains(b.doc["jobs"][1]["error"].get<std::string>(), "is also written by the job at"));
    BOOST_TEST(cktest::files_equal(dir / "out" / "micro-llama-q4_k_m.gguf", sample()));
}

BOOST_AUTO_TEST_CASE(ctrl_c_stops_every_job_and_leaves_nothing_behind) {
    cktest::TempDir dir;
    const std::string plugins = cktest::test_plugin_dir().string();
    auto jobs = [&](int sleep_ms) {
        std::string text;
        for (const char* name : {"a", "b", "c"})
            text += "gguf:testkit[sleep_ms=" + std::to_string(sleep_ms) + "]:gguf " + sample() +
                    " " + (dir / "out" / name).string() + ".gguf\n";
        return text;
    };
    // 21 tensors at 200 ms each: both running jobs are mid-write when the signal comes. Wait
    // until both have their temporary file rather than a fixed time: under the sanitizers on a
    // loaded machine a job can take more than a second to start.
    fs::create_directory(dir / "out");
    write_text(dir / "jobs.txt", jobs(200));
    const auto wait_for_two_temporaries = [&dir] {
        for (int waited = 0; sorted_entries(dir, "out").size() < 2u && waited < 30000; waited += 50)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        BOOST_TEST_REQUIRE(sorted_entries(dir, "out").size() == 2u);  // two temporary files
    };
    pid_t pid = cktest::spawn_ckhost(
        {"batch", (dir / "jobs.txt").string(), "--jobs", "2", "--plugin-dir", plugins});
    wait_for_two_temporaries();
    ::kill(pid, SIGINT);  // the batch alone, as a scheduler or `kill -INT` would
    BOOST_TEST(cktest::wait_exit_code(pid) == 130);
    BOOST_TEST(sorted_entries(dir, "out").empty());

    // Ctrl-C on a terminal signals the batch and its jobs together: each job gets SIGINT twice
    // (directly and forwarded), and must still stop cleanly rather than die on the second.
    pid = cktest::spawn_ckhost(
        {"batch", (dir / "jobs.txt").string(), "--jobs", "2", "--plugin-dir", plugins});
    wait_for_two_temporaries();
    const auto jobs_running = children_of(pid);
    BOOST_TEST_REQUIRE(jobs_running.size() == 2u);
    for (pid_t job : jobs_running) ::kill(job, SIGINT);
    ::kill(pid, SIGINT);
    BOOST_TEST(cktest::wait_exit_code(pid) == 130);
    BOOST_TEST(sorted_entries(dir, "out").empty());

    // An interrupted batch is simply run again.
    write_text(dir / "jobs.txt", jobs(0));
    Batch again = run_batch({(dir / "jobs.txt").string(), "--plugin-dir", plugins});
    BOOST_TEST(again.run.exit_code == 0, again.run.err);
    BOOST_TEST(sorted_entries(dir, "out") ==
               (std::vector<std::string>{"a.gguf", "a.gguf.ckhost.json", "b.gguf",
                                         "b.gguf.ckhost.json", "c.gguf", "c.gguf.ckhost.json"}));
}

// Two jobs writing into one directory the batch creates, interrupted with Ctrl-C (the batch and
// its jobs signalled together, as a terminal does): the directory goes with their temporary
// files. Job a creates new/ and stops first (it checks for Ctrl-C every 100 ms), while job b
// (every 1500 ms) still has its temporary file there: a job removes only the directories it
// created, and only while they are empty, so before the batch cleaned up after its jobs new/
// stayed behind (3 runs in 5 when the order was left to chance). Job q, between them, makes b
// start after a has created new/.
BOOST_AUTO_TEST_CASE(ctrl_c_leaves_no_directory_the_batch_created) {
    cktest::TempDir dir;
    const std::string plugins = cktest::test_plugin_dir().string();
    const std::string text = "gguf:testkit[sleep_ms=100]:gguf " + sample() + " " +
                             (dir / "new" / "a.gguf").string() +
                             "\n"
                             "gguf:testkit[sleep_ms=10]:gguf " +
                             sample() + " " + (dir / "q.gguf").string() +
                             "\n"
                             "gguf:testkit[sleep_ms=1500]:gguf " +
                             sample() + " " + (dir / "new" / "sub" / "b.gguf").string() + "\n";
    write_text(dir / "jobs.txt", text);
    for (int run = 0; run < 3; ++run) {
        BOOST_TEST_CONTEXT("run " << run) {
            fs::remove(dir / "q.gguf");
            fs::remove(dir / "q.gguf.ckhost.json");
            const pid_t pid = cktest::spawn_ckhost(
                {"batch", (dir / "jobs.txt").string(), "--jobs", "2", "--plugin-dir", plugins});
            cktest::wait_for_temporary(dir / "new", "a.gguf");
            cktest::wait_for_temporary(dir / "new" / "sub", "b.gguf");
            for (pid_t job : children_of(pid)) ::kill(job, SIGINT);
            ::kill(pid, SIGINT);
            BOOST_TEST(cktest::wait_exit_code(pid) == 130);
            BOOST_TEST(!fs::exists(dir / "new"));
            BOOST_TEST((sorted_entries(dir, ".") ==
                        std::vector<std::string>{"jobs.txt", "q.gguf", "q.gguf.ckhost.json"}));
        }
    }
}

// A jobs file's relative paths lead from its own folder (decision 0046), in both of its forms;
// standard input's from the current directory. The report shows them as the file gives them,
// and the files written.
BOOST_AUTO_TEST_CASE(relative_paths_are_relative_to_the_jobs_file) {
    cktest::TempDir dir;
    fs::create_directory(dir / "lists");
    fs::copy_file(sample(), dir / "lists" / "model.gguf");
    write_text(dir / "lists" / "jobs.txt", "gguf:gguf model.gguf out/a.gguf\n");
    write_text(dir / "lists" / "jobs.json",
               R"([{"pipeline": "gguf:gguf", "input": "model.gguf", "output": "out/b.gguf"}])");
    for (const char* list : {"jobs.txt", "jobs.json"}) {
        Batch b = run_batch({(dir / "lists" / list).string(), "-q"});
        BOOST_TEST_REQUIRE(b.run.exit_code == 0, list << ": " << b.run.out << b.run.err);
        BOOST_TEST(b.doc["jobs"][0]["input"] == "model.gguf", b.run.out);
        const std::string written = b.doc["jobs"][0]["outputs"][0].get<std::string>();
        BOOST_TEST(fs::equivalent(
            written,
            dir / "lists" / "out" / (list == std::string("jobs.txt") ? "a.gguf" : "b.gguf")));
    }
    BOOST_TEST(cktest::files_equal(dir / "lists" / "out" / "a.gguf", sample()));
    // A list written for the current directory is told what changed.
    // The list's folder is deeper than the current directory, so that the '..'s of a path
    // written for the current directory cannot climb to / from there and come down onto the
    // same file by chance.
    const fs::path from_here = fs::relative(dir / "lists" / "model.gguf", fs::current_path());
    fs::path deeper = dir / "lists";
    for (const auto& part : fs::current_path()) {
        (void)part;
        deeper /= "d";
    }
    fs::create_directories(deeper);
    write_text(deeper / "old.txt",
               "gguf:gguf " + from_here.string() + " " + (dir / "c.gguf").string() + "\n");
    Batch old = run_batch({(deeper / "old.txt").string(), "-q"});
    BOOST_TEST_REQUIRE(old.run.exit_code == 1, old.run.err);
    BOOST_TEST(contains(old.doc["jobs"][0]["error"].get<std::string>(),
                        "relative paths in a jobs file are relative to its folder, " +
                            deeper.string() + "/"),
               old.run.out);
    BOOST_TEST(!fs::exists(dir / "c.gguf"));
    // Standard input has no folder: the current directory, as before.
    auto r = cktest::run_ckhost_with_stdin(
        {"batch", "-", "-q"},
        "gguf:gguf " + from_here.string() + " " + (dir / "d.gguf").string() + "\n");
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(dir / "d.gguf", sample()));
}

// batch-report --resubmit writes its list somewhere else than the jobs file: its relative paths
// are rewritten to lead from there to the same files.
BOOST_AUTO_TEST_CASE(resubmitted_relative_paths_lead_to_the_same_files) {
    cktest::TempDir dir;
    fs::create_directory(dir / "lists");
    write_text(dir / "lists" / "jobs.txt", "gguf:gguf missing.gguf 'out dir/'\n");
    auto r = cktest::run_ckhost({"batch", (dir / "lists" / "jobs.txt").string(), "--report-dir",
                                 (dir / "reports").string(), "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 1, r.err);
    const fs::path todo = dir / "reports" / "todo.txt";
    r = cktest::run_ckhost(
        {"batch-report", (dir / "reports").string(), "--resubmit", todo.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 1, r.err);
    const auto bytes = cktest::read_file(todo);
    const auto jobs = ckhost::parse_jobs(std::string(bytes.begin(), bytes.end()), todo.string());
    BOOST_TEST_REQUIRE(jobs.size() == 1u);
    BOOST_TEST(jobs[0].input == "../lists/missing.gguf");
    BOOST_TEST(jobs[0].output == "../lists/out dir/");
    const ckhost::Conversion files = jobs[0].files();
    BOOST_TEST(fs::absolute(files.input).lexically_normal() == dir / "lists" / "missing.gguf");
    BOOST_TEST(fs::absolute(files.output).lexically_normal() == dir / "lists" / "out dir/");
}

// examples/batch/convert_folder.sh: every *.gguf of a folder, one directory per model.
BOOST_AUTO_TEST_CASE(the_folder_script_converts_every_model_of_a_folder) {
    cktest::TempDir dir;
    fs::create_directory(dir / "models");
    fs::copy_file(sample(), dir / "models" / "a.gguf");
    fs::copy_file(sample(), dir / "models" / "b c.gguf");
    fs::copy_file(bad_input(), dir / "models" / "broken.gguf");
    write_text(dir / "models" / "notes.txt", "not a model\n");
    const std::string command = "CKHOST='" + cktest::ckhost_binary().string() + "' bash '" +
                                (cktest::examples_dir() / "batch" / "convert_folder.sh").string() +
                                "' gguf:gguf '" + (dir / "models").string() + "' '" +
                                (dir / "out").string() + "' --jobs 2 --json > '" +
                                (dir / "report.json").string() + "' 2>/dev/null";
    const int status = std::system(command.c_str());
    BOOST_TEST(WEXITSTATUS(status) == 1);  // the broken model failed, the others did not
    BOOST_TEST(sorted_entries(dir, "out") ==
               (std::vector<std::string>{"a", "a/a.gguf", "a/a.gguf.ckhost.json", "b c",
                                         "b c/b c.gguf", "b c/b c.gguf.ckhost.json"}));
    BOOST_TEST(cktest::files_equal(dir / "out" / "b c" / "b c.gguf", sample()));
    auto report = cktest::read_file(dir / "report.json");
    json doc = json::parse(report.begin(), report.end());
    BOOST_TEST(doc["summary"]["ok"].get<int>() == 2);
    BOOST_TEST(doc["summary"]["failed"].get<int>() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_batch
