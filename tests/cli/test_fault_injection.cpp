// Fault injection (issue 15): a full disk, an unwritable directory, an input that disappears or
// changes between planning and commit, a batch job killed with SIGKILL. Each must fail with
// the right exit status and a message naming the right file, and leave no partial output: no
// temporary file, no created directory, and a file being replaced exactly as it was.
//
// A full disk is a tmpfs of 320 KiB where this process may mount one (root with
// CAP_SYS_ADMIN); elsewhere (CI as an ordinary user, most containers) RLIMIT_FSIZE stands in
// for it, which fails the same write() with EFBIG instead of ENOSPC, and the test says so. An
// unwritable directory must stop root too, which ignores permission bits: as root it is a
// read-only bind mount of the directory (or, where mounting is refused, `chattr +i`), as an
// ordinary user mode 0555; the test says which, and skips when neither is possible.
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_fault_injection {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

using cktest::sample_model;

// A mount on `where`, undone (lazily, so a busy file cannot keep it) when this goes.
class Mount {
  public:
    explicit Mount(fs::path where) : where_(std::move(where)) {}
    ~Mount() { ::umount2(where_.c_str(), MNT_DETACH); }
    Mount(const Mount&) = delete;
    Mount& operator=(const Mount&) = delete;

    // A tmpfs with these options, or nullptr and the reason in `why`.
    static std::unique_ptr<Mount> tmpfs(const fs::path& where, const std::string& options,
                                        std::string& why) {
        if (::mount("tmpfs", where.c_str(), "tmpfs", 0, options.c_str()) != 0) {
            why = std::strerror(errno);
            return nullptr;
        }
        return std::make_unique<Mount>(where);
    }
    // The directory bound over itself, read-only: its files stay visible, nothing can change.
    static std::unique_ptr<Mount> read_only(const fs::path& where, std::string& why) {
        if (::mount(where.c_str(), where.c_str(), nullptr, MS_BIND, nullptr) != 0) {
            why = std::strerror(errno);
            return nullptr;
        }
        auto m = std::make_unique<Mount>(where);
        if (::mount(nullptr, where.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) !=
            0) {
            why = std::strerror(errno);
            return nullptr;
        }
        return m;
    }

  private:
    fs::path where_;
};

std::string text_of(const fs::path& p) {
    const auto bytes = cktest::read_file(p);
    return {bytes.begin(), bytes.end()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fault_injection)

BOOST_AUTO_TEST_CASE(a_full_disk_is_a_clean_error) {
    cktest::TempDir dir;
    const fs::path disk = dir / "disk";
    fs::create_directory(disk);
    std::string why;
    const auto mounted = Mount::tmpfs(disk, "size=320k", why);
    if (!mounted)
        BOOST_TEST_MESSAGE(
            "a full disk: cannot mount a tmpfs here ("
            << why << ": not root, or no CAP_SYS_ADMIN): RLIMIT_FSIZE of 320 KiB stands in for it");
    const std::string reason = mounted ? "No space left on device" : "File too large";
    // The 1.3 MB sample does not fit in 320 KiB either way.
    auto run = [&](std::vector<std::string> args) {
        if (mounted) return cktest::run_ckhost(args);
        args.insert(args.begin(),
                    {"-c", "ulimit -f 640; exec \"$0\" \"$@\"", cktest::ckhost_binary().string()});
        return cktest::run_program("sh", args);
    };

    const fs::path target = disk / "o.gguf";
    auto r = run({"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o", target.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "ckhost: error: " + target.string() + ": write failed: " + reason),
               r.err);
    BOOST_TEST(fs::is_empty(disk));

    // Replacing a file: it stays as it was.
    cktest::write_file(disk / "keep.gguf", {'o', 'l', 'd'});
    r = run({"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o",
             (disk / "keep.gguf").string(), "--force"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, (disk / "keep.gguf").string() + ": write failed: " + reason), r.err);
    BOOST_TEST(text_of(disk / "keep.gguf") == "old");

    // The main job: config.json fits, weights.bump does not; neither stays, nor does out/.
    r = run({"-q", "--pipeline", "gguf:headpack:bump", "-i", sample_model().string(), "-o",
             (disk / "out/").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(
        contains(r.err, (disk / "out" / "weights.bump").string() + ": write failed: " + reason),
        r.err);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(disk)) left.push_back(e.path().filename().string());
    BOOST_TEST((left == std::vector<std::string>{"keep.gguf"}));
    if (mounted) {
        // Nothing holds the space: what is free is what was free before the runs.
        const auto space = fs::space(disk);
        BOOST_TEST(space.available > 300u * 1024u);
    }
}

BOOST_AUTO_TEST_CASE(an_unwritable_directory_is_a_clean_error) {
    cktest::TempDir dir;
    const fs::path locked = dir / "locked";
    fs::create_directory(locked);
    cktest::write_file(locked / "keep.gguf", {'o', 'l', 'd'});

    // A path through a regular file cannot be written by anyone.
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o",
                                 (locked / "keep.gguf" / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, (locked / "keep.gguf" / "o.gguf").string() +
                                   ": cannot create a temporary file beside the output: Not a "
                                   "directory"),
               r.err);

    std::unique_ptr<Mount> read_only;
    bool immutable = false;
    std::string reason;
    if (::geteuid() != 0) {
        ::chmod(locked.c_str(), 0555);
        reason = "Permission denied";
        BOOST_TEST_MESSAGE("an unwritable directory: mode 0555");
    } else {
        std::string why;
        read_only = Mount::read_only(locked, why);
        if (read_only) {
            reason = "Read-only file system";
            BOOST_TEST_MESSAGE(
                "an unwritable directory: root ignores mode bits, so a read-only "
                "bind mount");
        } else if (std::system(("chattr +i '" + locked.string() + "' 2>/dev/null").c_str()) == 0) {
            immutable = true;
            reason = "Operation not permitted";
            BOOST_TEST_MESSAGE("an unwritable directory: cannot mount (" << why
                                                                         << "), so chattr +i");
        } else {
            BOOST_TEST_MESSAGE(
                "an unwritable directory: skipped: running as root, and neither a "
                "read-only bind mount ("
                << why << ") nor chattr +i is possible here");
            return;
        }
    }
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    for (const Case& c :
         {Case{{"--pipeline", "gguf:gguf", "-o", (locked / "o.gguf").string()},
               (locked / "o.gguf").string() +
                   ": cannot create a temporary file beside the output: " + reason},
          Case{{"--pipeline", "gguf:gguf", "-o", (locked / "keep.gguf").string(), "--force"},
               (locked / "keep.gguf").string() +
                   ": cannot create a temporary file beside the output: " + reason},
          Case{{"-q", "--pipeline", "gguf:headpack:bump", "-o", (locked / "out/").string()},
               (locked / "out").string() + ": cannot create directory: " + reason}}) {
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {"-i", sample_model().string()});
        r = cktest::run_ckhost(args);
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, "ckhost: error: " + c.message), r.err);
    }
    read_only.reset();
    if (immutable) BOOST_TEST(std::system(("chattr -i '" + locked.string() + "'").c_str()) == 0);
    ::chmod(locked.c_str(), 0755);
    BOOST_TEST(text_of(locked / "keep.gguf") == "old");
    BOOST_TEST(dir.entries().size() == 2u);  // locked/ and locked/keep.gguf
}

// The reader maps the input when the conversion is planned. An input removed, replaced (a new
// download renamed over it) or written in place before the outputs are committed would still
// convert from the old bytes into outputs that look newer than the input; so the commit checks
// that the path still names the same, unchanged file, and refuses otherwise.
BOOST_AUTO_TEST_CASE(an_input_that_disappears_before_commit_is_a_clean_error) {
    struct Case {
        std::string option, message;
        bool input_left;
    };
    for (const Case& c : {Case{"remove_input_at=5",
                               "the file was removed while being read; nothing was written", false},
                          Case{"replace_input_at=5", "the file changed while being read", true},
                          Case{"rewrite_input_at=5", "the file changed while being read", true}}) {
        for (const std::string writer : {"gguf", "headpack:bump"}) {
            cktest::TempDir in, out;
            const fs::path input = in / "m.gguf";
            fs::copy_file(sample_model().string(), input);
            cktest::write_file(out / "o.gguf", {'o', 'l', 'd'});
            const std::string pipeline = "gguf:testkit[" + c.option + "]:" + writer;
            const fs::path destination = writer == "gguf" ? out / "o.gguf" : out / "new/";
            auto r = cktest::run_ckhost({"-q", "--plugin-dir", cktest::test_plugin_dir().string(),
                                         "--pipeline", pipeline, "-i", input.string(), "-o",
                                         destination.string(), "--force"});
            BOOST_TEST(r.exit_code == 1, pipeline << ": " << r.err);
            BOOST_TEST(contains(r.err, "ckhost: error: " + input.string() + ": " + c.message),
                       pipeline << ": " << r.err);
            BOOST_TEST(text_of(out / "o.gguf") == "old");
            BOOST_TEST(out.entries().size() == 1u, pipeline);
            BOOST_TEST(in.entries().size() == (c.input_left ? 1u : 0u), pipeline);
        }
    }
}

// A batch job killed outright (the out-of-memory killer, a scheduler's limit) cannot clean up
// after itself. The batch reports that job as failed, naming the signal, removes the temporary
// file the job left, and runs the other jobs; nothing of the killed job's output exists, and the
// next run of the batch completes it.
BOOST_AUTO_TEST_CASE(a_batch_job_killed_with_sigkill) {
    cktest::TempDir dir;
    const fs::path out = dir / "out";
    fs::create_directory(out);
    std::ofstream(dir / "jobs.txt")
        << "gguf:testkit[sleep_ms=100]:gguf " << sample_model().string() << " "
        << (out / "slow.gguf").string() << "\n"
        << "gguf:gguf " << sample_model().string() << " " << (out / "fast.gguf").string() << "\n";
    const std::vector<std::string> batch = {
        "batch",        (dir / "jobs.txt").string(),       "--jobs", "2", "--json",
        "--plugin-dir", cktest::test_plugin_dir().string()};
    const pid_t pid = cktest::spawn_ckhost(batch, "/dev/null", (dir / "report.json").string(),
                                           (dir / "err.txt").string());
    const fs::path temp = cktest::wait_for_temporary(out, "slow.gguf");
    const pid_t job = cktest::pid_of_temporary(temp);
    BOOST_TEST_REQUIRE(job != pid);  // the job's own process, not the batch
    ::kill(job, SIGKILL);
    BOOST_TEST(cktest::wait_exit_code(pid) == 1, text_of(dir / "err.txt"));

    const auto report = nlohmann::json::parse(text_of(dir / "report.json"));
    const auto& killed = report["jobs"][0];
    BOOST_TEST(killed["status"].get<std::string>() == "failed");
    BOOST_TEST(killed["outputs"][0].get<std::string>() == (out / "slow.gguf").string());
    BOOST_TEST(killed["error"].get<std::string>() ==
               "ended by signal 9 (Killed); removed its temporary file " + temp.string());
    BOOST_TEST(report["jobs"][1]["status"].get<std::string>() == "ok");
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(out)) left.push_back(e.path().filename().string());
    std::sort(left.begin(), left.end());
    BOOST_TEST((left == std::vector<std::string>{"fast.gguf", "fast.gguf.ckhost.json"}));

    auto r = cktest::run_ckhost(batch);
    BOOST_TEST(r.exit_code == 0, r.err);
    const auto again = nlohmann::json::parse(r.out);
    BOOST_TEST(again["jobs"][0]["status"].get<std::string>() == "ok");
    BOOST_TEST(again["jobs"][1]["status"].get<std::string>() == "skipped");
    BOOST_TEST(cktest::files_equal(sample_model().string(), out / "slow.gguf"));
    BOOST_TEST(cktest::files_equal(sample_model().string(), out / "fast.gguf"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_fault_injection
