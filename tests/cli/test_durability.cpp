// Durability (issue 15): every output is fsync'ed before its rename and the directories after
// (unless --no-sync or CKHOST_NO_SYNC=1); an fsync that fails is an error naming the file that
// leaves nothing behind; temporary names carry the pid, and a later run removes what a killed
// ckhost left, saying so, while a running one's file is left alone.
//
// The order of the calls and fsync failures are observed through an LD_PRELOAD library
// (tests/support/fault_inject.cpp): no file system a test can mount fails fsync on demand.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_durability {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

using cktest::sample_model;

// The fault injection library, preloaded into every process started while this exists. A
// sanitized ckhost wants its runtime first among the libraries, which a preload is not.
class FaultInjection {
  public:
    FaultInjection()
        : preload_("LD_PRELOAD", fault_library()),
          asan_("ASAN_OPTIONS", asan_options()),
          log_("CKFAULT_LOG", (dir_ / "calls.log").string()) {}
    // Each call logged since the last call: "fsync PATH" or "rename FROM TO".
    std::vector<std::string> calls() {
        std::vector<std::string> lines;
        std::ifstream in(dir_ / "calls.log");
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        fs::remove(dir_ / "calls.log");
        return lines;
    }

  private:
    static std::string fault_library() {
        const char* lib = std::getenv("CKFAULT_LIB");
        BOOST_TEST_REQUIRE(lib != nullptr, "CKFAULT_LIB is not set (run through ctest)");
        return lib;
    }
    static std::string asan_options() {
        const char* old = std::getenv("ASAN_OPTIONS");
        return std::string(old ? old : "") + (old && *old ? ":" : "") + "verify_asan_link_order=0";
    }
    cktest::TempDir dir_;
    cktest::ScopedEnv preload_, asan_, log_;
};

std::size_t index_of(const std::vector<std::string>& lines, const std::string& line) {
    const auto it = std::find(lines.begin(), lines.end(), line);
    return it == lines.end() ? SIZE_MAX : static_cast<std::size_t>(it - lines.begin());
}

std::string joined(const std::vector<std::string>& lines) {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
}

// The temporary files in `dir` (ckhost's names: ".NAME.ckhost-PID-HOST-XXXXXX").
std::vector<fs::path> temporaries(const fs::path& dir) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().filename().string().find(".ckhost-") != std::string::npos)
            found.push_back(e.path());
    return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(durability)

// Each file is fsync'ed before it is renamed, and each directory that got a file or a new
// directory after the last rename; --no-sync and CKHOST_NO_SYNC=1 skip every fsync.
BOOST_AUTO_TEST_CASE(outputs_are_synced_before_their_rename_and_directories_after) {
    FaultInjection faults;
    cktest::TempDir dir;
    const fs::path out = dir / "out";
    auto r = cktest::run_ckhost({"-q", "--pipeline", "gguf:headpack:bump", "-i",
                                 sample_model().string(), "-o", out.string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto calls = faults.calls();
    std::size_t last_rename = 0, renames = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        if (!calls[i].starts_with("rename ")) continue;
        ++renames;
        last_rename = i;
        std::istringstream words(calls[i].substr(7));
        std::string from, to;
        words >> from >> to;
        BOOST_TEST(index_of(calls, "fsync " + from) < i,
                   "not synced before its rename: " << from << "\n"
                                                    << joined(calls));
        BOOST_TEST((to == (out / "weights.bump").string() || to == (out / "config.json").string()));
    }
    BOOST_TEST(renames == 2u, joined(calls));
    // out/ holds the files; dir/ holds out/, which this run created.
    for (const fs::path& synced : {out, dir.path()}) {
        const std::size_t at = index_of(calls, "fsync " + synced.string());
        BOOST_TEST((at != SIZE_MAX && at > last_rename), synced << "\n" << joined(calls));
    }

    for (bool by_option : {true, false}) {
        cktest::TempDir other;
        std::optional<cktest::ScopedEnv> env;
        std::vector<std::string> args = {"-q",
                                         "--pipeline",
                                         "gguf:headpack:bump",
                                         "-i",
                                         sample_model().string(),
                                         "-o",
                                         (other / "out/").string()};
        if (by_option)
            args.push_back("--no-sync");
        else
            env.emplace("CKHOST_NO_SYNC", "1");
        r = cktest::run_ckhost(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const auto unsynced = faults.calls();
        BOOST_TEST(std::none_of(unsynced.begin(), unsynced.end(),
                                [](const std::string& l) { return l.starts_with("fsync"); }),
                   joined(unsynced));
        BOOST_TEST(std::count_if(unsynced.begin(), unsynced.end(), [](const std::string& l) {
                       return l.starts_with("rename");
                   }) == 2);
        BOOST_TEST(cktest::files_equal(out / "weights.bump", other / "out" / "weights.bump"));
    }
    cktest::ScopedEnv bad("CKHOST_NO_SYNC", "yes");
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o", (dir / "x").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "CKHOST_NO_SYNC=yes: expected 1 (skip fsync) or 0"), r.err);
}

// A synced output's write-back is started as it grows (sync_file_range, every 8 MiB), before
// its fsync, so that the fsync at commit has little left to wait for; --no-sync starts none.
BOOST_AUTO_TEST_CASE(write_back_starts_before_the_fsync) {
    FaultInjection faults;
    cktest::TempDir dir;
    const fs::path target = dir / "f32.gguf";  // 8.4 MB: past one 8 MiB window
    for (bool sync : {true, false}) {
        std::vector<std::string> args = {"--pipeline", "gguf:dequant[to=f32]:gguf",
                                         "-i",         sample_model().string(),
                                         "-o",         target.string(),
                                         "--force"};
        if (!sync) args.push_back("--no-sync");
        auto r = cktest::run_ckhost(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const auto calls = faults.calls();
        const auto started = std::find_if(calls.begin(), calls.end(), [](const std::string& l) {
            return l.starts_with("sync_file_range ") && contains(l, "/.f32.gguf.ckhost-") &&
                   l.ends_with(" 0 8388608");
        });
        if (!sync) {
            BOOST_TEST((started == calls.end()), joined(calls));
            continue;
        }
        BOOST_TEST_REQUIRE((started != calls.end()), joined(calls));
        const std::string temp = started->substr(16, started->find(' ', 16) - 16);
        BOOST_TEST(
            index_of(calls, "fsync " + temp) > static_cast<std::size_t>(started - calls.begin()),
            joined(calls));
    }
}

// fsync reports what write() could not: a disk that is full (delayed allocation, thin
// provisioning, NFS) or failing. Either is an error naming the output; nothing is renamed, the
// temporary files and created directories go, and the file being replaced stays as it was.
BOOST_AUTO_TEST_CASE(a_failing_fsync_is_an_error_that_leaves_nothing) {
    FaultInjection faults;
    cktest::ScopedEnv match("CKFAULT_FSYNC_MATCH", ".ckhost-");
    for (const auto& [code, text] :
         {std::pair{EIO, "Input/output error"}, std::pair{ENOSPC, "No space left on device"}}) {
        cktest::ScopedEnv errno_env("CKFAULT_FSYNC_ERRNO", std::to_string(code));
        cktest::TempDir dir;
        const fs::path target = dir / "o.gguf";
        cktest::write_file(target, {'o', 'l', 'd'});
        auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o",
                                     target.string(), "--force"});
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, "ckhost: error: " + target.string() + ": fsync failed: " + text),
                   r.err);
        BOOST_TEST(cktest::read_file(target).size() == 3u);
        BOOST_TEST(dir.entries().size() == 1u);
        // The main job's two files and the directory it made: all gone.
        r = cktest::run_ckhost({"-q", "--pipeline", "gguf:headpack:bump", "-i",
                                sample_model().string(), "-o", (dir / "new" / "out/").string()});
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, ": fsync failed: " + std::string(text)), r.err);
        BOOST_TEST(dir.entries().size() == 1u);
        // --no-sync never calls fsync, so the same fault cannot stop it.
        r = cktest::run_ckhost({"--no-sync", "--pipeline", "gguf:gguf", "-i",
                                sample_model().string(), "-o", target.string(), "--force"});
        BOOST_TEST(r.exit_code == 0, r.err);
        BOOST_TEST(cktest::files_equal(sample_model().string(), target));
    }
}

// After the renames the outputs are in place; a directory that cannot be synced is still an
// error (exit 1) naming the directory, since the rename may not survive a crash.
BOOST_AUTO_TEST_CASE(a_failing_directory_fsync_is_reported) {
    FaultInjection faults;
    cktest::TempDir dir;
    const fs::path out = dir / "out";
    fs::create_directory(out);
    cktest::ScopedEnv match("CKFAULT_FSYNC_MATCH", out.string());
    cktest::ScopedEnv dirs("CKFAULT_FSYNC_DIRS", "1");
    cktest::ScopedEnv code("CKFAULT_FSYNC_ERRNO", std::to_string(EIO));
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o",
                                 (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(
        contains(r.err, out.string() + ": fsync of the directory failed (the outputs are in place "
                                       "but may not survive a crash): Input/output error"),
        r.err);
    BOOST_TEST(cktest::files_equal(sample_model().string(), out / "o.gguf"));
    BOOST_TEST(temporaries(out).empty());
}

// SIGKILL cannot be caught: the killed run's temporary file stays (the target is untouched).
// The next run for the same target removes it, says so on stderr and in --json, and writes.
BOOST_AUTO_TEST_CASE(a_killed_runs_temporary_file_is_removed_by_the_next_run) {
    cktest::TempDir dir;
    const fs::path target = dir / "o.gguf";
    const pid_t pid = cktest::spawn_ckhost({"--plugin-dir", cktest::test_plugin_dir().string(),
                                            "--pipeline", "gguf:testkit[sleep_ms=100]:gguf", "-i",
                                            sample_model().string(), "-o", target.string()});
    const fs::path temp = cktest::wait_for_temporary(dir.path(), "o.gguf");
    BOOST_TEST(cktest::pid_of_temporary(temp) == pid);
    ::kill(pid, SIGKILL);
    BOOST_TEST(cktest::wait_exit_code(pid) == 128 + SIGKILL);
    BOOST_TEST(!fs::exists(target));
    BOOST_TEST_REQUIRE(fs::exists(temp));

    auto r = cktest::run_ckhost({"--json", "--pipeline", "gguf:gguf", "-i", sample_model().string(),
                                 "-o", target.string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "ckhost: removed stale temporary file " + temp.string() +
                                   " left by ckhost process " + std::to_string(pid) + "\n"),
               r.err);
    const auto report = nlohmann::json::parse(r.out);
    BOOST_TEST(report["stale_temporaries_removed"][0]["path"].get<std::string>() == temp.string());
    BOOST_TEST(report["stale_temporaries_removed"][0]["pid"].get<long>() == pid);
    BOOST_TEST(cktest::files_equal(sample_model().string(), target));
    BOOST_TEST(dir.entries().size() == 1u);
}

// A temporary file whose writer is alive is never touched: a second run for the same target
// (with --force) leaves it, and the first run, finding at commit that the target appeared
// meanwhile, refuses to replace it (it had no --force) and removes its own file.
BOOST_AUTO_TEST_CASE(a_running_conversions_file_is_left_alone) {
    cktest::TempDir dir;
    const fs::path target = dir / "o.gguf";
    const fs::path first_err = dir.path().parent_path() / (dir.path().filename().string() + ".err");
    const pid_t first = cktest::spawn_ckhost(
        {"--plugin-dir", cktest::test_plugin_dir().string(), "--pipeline",
         "gguf:testkit[sleep_ms=60]:gguf", "-i", sample_model().string(), "-o", target.string()},
        "/dev/null", "/dev/null", first_err.string());
    const fs::path temp = cktest::wait_for_temporary(dir.path(), "o.gguf");
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o",
                                 target.string(), "--force"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(!contains(r.err, "removed"), r.err);
    BOOST_TEST(fs::exists(temp));
    BOOST_TEST(cktest::wait_exit_code(first) == 1);
    const auto err = cktest::read_file(first_err);
    fs::remove(first_err);
    BOOST_TEST(contains(
        std::string(err.begin(), err.end()),
        target.string() + ": output file appeared while converting (use --force to overwrite)"));
    BOOST_TEST(cktest::files_equal(sample_model().string(), target));
    BOOST_TEST(dir.entries().size() == 1u);
}

// A batch hands --no-sync on to every job; each job's report says whether it synced.
BOOST_AUTO_TEST_CASE(batch_passes_no_sync_to_its_jobs) {
    cktest::TempDir dir;
    std::ofstream(dir / "jobs.txt")
        << "gguf:gguf " << sample_model().string() << " " << (dir / "a.gguf").string() << "\n";
    for (bool sync : {false, true}) {
        std::vector<std::string> args = {"batch", (dir / "jobs.txt").string(), "--json", "--force"};
        if (!sync) args.push_back("--no-sync");
        auto r = cktest::run_ckhost(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const auto doc = nlohmann::json::parse(r.out);
        BOOST_TEST(doc["jobs"][0]["report"]["sync"].get<bool>() == sync);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_durability
