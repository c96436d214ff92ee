// `-o -` writes standard output for writers that write one file front to back (gguf,
// safetensors; others are refused before anything is read), and `-i -` reads standard input
// through a spool file that has no name, so nothing can be left behind (issue 15). `-` used to
// be refused outright, and before that silently named a file called '-'.
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_standard_streams {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

using cktest::sample_model;

std::string bytes_of(const fs::path& p) {
    const auto v = cktest::read_file(p);
    return {v.begin(), v.end()};
}

// Runs a bash command line with ckhost as $0 and the sample as $1 (pipelines with `cat` give
// ckhost a pipe, not a file, on its standard input).
cktest::RunResult bash(const std::string& script, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"-c", script, cktest::ckhost_binary().string(),
                                     sample_model().string()};
    args.insert(args.end(), more.begin(), more.end());
    return cktest::run_program("bash", args);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(standard_streams)

// What goes to standard output is byte for byte the file -o FILE writes; no file named '-'.
BOOST_AUTO_TEST_CASE(o_dash_streams_what_a_file_would_hold) {
    cktest::TempDir dir;
    const fs::path dash = fs::current_path() / "-";
    for (const std::string pipeline :
         {"gguf:gguf", "gguf:gguf[endian=big]", "gguf:dequant:safetensors"}) {
        const fs::path file = dir / "o.out";
        auto r = cktest::run_ckhost({"--pipeline", pipeline, "-i", sample_model().string(), "-o",
                                     file.string(), "--force"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        // -q: a conversion that changes the tensors notes general.file_type on stderr.
        r = cktest::run_ckhost(
            {"-q", "--pipeline", pipeline, "-i", sample_model().string(), "-o", "-"});
        BOOST_TEST(r.exit_code == 0, pipeline << ": " << r.err);
        BOOST_TEST(r.err.empty(), r.err);
        BOOST_TEST((r.out == bytes_of(file)), pipeline);
        BOOST_TEST(!fs::exists(dash));
    }
    BOOST_TEST(dir.entries().size() == 1u);
}

// A writer that patches its header at the end (bump, gguflite) or writes several files (a split
// set) cannot stream: exit 2 before anything is read or written, naming the writers that can.
BOOST_AUTO_TEST_CASE(o_dash_is_refused_for_writers_that_patch_or_split) {
    const fs::path dash = fs::current_path() / "-";
    struct Case {
        std::string pipeline, message;
    };
    for (const Case& c :
         {Case{"gguf:headpack:bump",
               "-o -: the writer 'bump' cannot write to standard output (it patches what it "
               "wrote, or writes several files); writers that can: "},
          Case{"gguf:dequant:gguflite", "the writer 'gguflite' cannot write to standard output"},
          Case{"gguf:gguf[split_max_tensors=5]",
               "-o -: the writer 'gguf[split_max_tensors=5]' would write 5 files"}}) {
        auto r = cktest::run_ckhost(
            {"--pipeline", c.pipeline, "-i", sample_model().string(), "-o", "-"});
        BOOST_TEST(r.exit_code == 2, c.pipeline << ": " << r.err);
        BOOST_TEST(contains(r.err, c.message), r.err);
        BOOST_TEST(r.out.empty());
        BOOST_TEST(!fs::exists(dash));
    }
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:headpack:bump", "-i", sample_model().string(), "-o", "-"});
    BOOST_TEST(contains(r.err, "writers that can: gguf, safetensors"), r.err);
    // --json would share standard output with the model; --update has no file to compare.
    r = cktest::run_ckhost(
        {"--json", "--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o", "-"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "-o - with --json"), r.err);
    // Refused before anything was read: standard output holds only the error document.
    BOOST_TEST(nlohmann::json::parse(r.out)["error"]["exit_code"] == 2, r.out);
    r = cktest::run_ckhost(
        {"--update", "--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o", "-"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "-o - with --update"), r.err);
    // --dry-run writes nothing, so it may name standard output.
    r = cktest::run_ckhost(
        {"--dry-run", "--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o", "-"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "output: - ("), r.out);
}

// A reader that stops reading (`| head`) is a write error naming standard output (exit 1), not a
// silent death by SIGPIPE.
BOOST_AUTO_TEST_CASE(a_reader_that_goes_away_is_a_clean_error) {
    auto r = bash(R"("$0" --pipeline gguf:gguf -i "$1" -o - | head -c 100 > /dev/null
                     exit ${PIPESTATUS[0]})");
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "ckhost: error: standard output: write failed: Broken pipe"), r.err);
}

// Bytes already sent cannot be taken back: a conversion that fails after some reached standard
// output says so, and the exit status tells the consumer to discard them.
BOOST_AUTO_TEST_CASE(a_failure_after_streaming_began_says_the_stream_is_incomplete) {
    cktest::TempDir dir;
    // Dequantized to f32 the model is 8 MB: by tensor 15 more than the 4 MiB buffer has gone.
    auto r = cktest::run_program(
        "bash", {"-c", R"("$0" --plugin-dir "$2" --pipeline "$3" -i "$1" -o - > "$4")",
                 cktest::ckhost_binary().string(), sample_model().string(),
                 cktest::test_plugin_dir().string(),
                 "gguf:dequant[to=f32]:testkit[fail_at=15]:gguf", (dir / "got").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err,
                        "testkit threw a std::runtime_error on purpose; what standard "
                        "output has received is not a complete conversion: discard it"),
               r.err);
    BOOST_TEST(fs::file_size(dir / "got") > 0u);
    // Failing before anything was sent says nothing of the kind.
    r = cktest::run_ckhost({"--plugin-dir", cktest::test_plugin_dir().string(), "--pipeline",
                            "gguf:testkit[fail_at=0]:gguf", "-i", sample_model().string(), "-o",
                            "-"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(!contains(r.err, "standard output"), r.err);
    BOOST_TEST(r.out.empty());
}

// A pipe on standard input is spooled to a nameless file in TMPDIR and converted like the file;
// a directory destination names the output after "stdin".
BOOST_AUTO_TEST_CASE(i_dash_reads_a_pipe_and_leaves_nothing) {
    cktest::TempDir tmp, out;
    auto r = bash(R"(cat "$1" | TMPDIR="$2" "$0" --pipeline gguf:gguf -i - -o "$3")",
                  {tmp.path().string(), (out / "copy.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(sample_model().string(), out / "copy.gguf"));
    r = bash(R"(cat "$1" | TMPDIR="$2" "$0" --pipeline gguf:gguf -i - -o "$3")",
             {tmp.path().string(), (out / "dir/").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(sample_model().string(), out / "dir" / "stdin.gguf"));
    // The main job from a pipe, against the same job from the file.
    r = bash(R"(cat "$1" | TMPDIR="$2" "$0" -q --pipeline gguf:headpack:bump -i - -o "$3")",
             {tmp.path().string(), (out / "piped/").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    r = cktest::run_ckhost({"-q", "--pipeline", "gguf:headpack:bump", "-i", sample_model().string(),
                            "-o", (out / "direct/").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(
        cktest::files_equal(out / "piped" / "weights.bump", out / "direct" / "weights.bump"));
    BOOST_TEST(cktest::files_equal(out / "piped" / "config.json", out / "direct" / "config.json"));
    // Both streams at once.
    r = bash(R"(cat "$1" | TMPDIR="$2" "$0" --pipeline gguf:gguf -i - -o -)",
             {tmp.path().string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST((r.out == bytes_of(sample_model().string())));
    // A redirected file is mapped where it is; the result is the same.
    r = cktest::run_ckhost_with_stdin({"--pipeline", "gguf:gguf", "-i", "-", "-o", "-"},
                                      bytes_of(sample_model().string()));
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST((r.out == bytes_of(sample_model().string())));
    BOOST_TEST(tmp.entries().empty());
}

// Errors about the input call it standard input, not the spool file, and leave nothing.
BOOST_AUTO_TEST_CASE(i_dash_errors_name_standard_input) {
    cktest::TempDir tmp, out;
    auto r = bash(R"(printf 'GGUF\3\0\0\0' | TMPDIR="$2" "$0" --pipeline gguf:gguf -i - -o "$3")",
                  {tmp.path().string(), (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "ckhost: error: standard input: "), r.err);
    BOOST_TEST(!contains(r.err, "/proc/self/fd"), r.err);
    r = bash(R"(TMPDIR="$2" "$0" --pipeline gguf:gguf -i - -o "$3" < /dev/null)",
             {tmp.path().string(), (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "standard input: byte 0: magic: empty file"), r.err);
    // --update compares modification times, which standard input has not.
    r = cktest::run_ckhost(
        {"--update", "--pipeline", "gguf:gguf", "-i", "-", "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "-i - with --update"), r.err);
    BOOST_TEST(tmp.entries().empty());
    BOOST_TEST(out.entries().empty());
}

// Ctrl-C while standard input is still being spooled (the producer is silent) stops ckhost at
// once (exit 130); SIGKILL there leaves nothing either, since the spool file has no name.
BOOST_AUTO_TEST_CASE(ctrl_c_or_sigkill_while_spooling_leaves_nothing) {
    for (int sig : {SIGINT, SIGKILL}) {
        cktest::TempDir tmp, out;
        const fs::path fifo = tmp / "fifo";
        BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        const fs::path spool_dir = tmp / "spool";
        fs::create_directory(spool_dir);
        cktest::ScopedEnv env("TMPDIR", spool_dir.string());
        // Opened for writing first (O_RDWR does not wait for a reader), so that the child's open
        // for reading does not wait either: posix_spawn's parent waits for the child's exec.
        const int fd = ::open(fifo.c_str(), O_RDWR);
        BOOST_TEST_REQUIRE(fd >= 0);
        const pid_t pid = cktest::spawn_ckhost(
            {"--pipeline", "gguf:gguf", "-i", "-", "-o", (out / "o.gguf").string()}, fifo.string(),
            "/dev/null", "/dev/null");
        const auto head = cktest::read_file(sample_model().string());
        BOOST_TEST_REQUIRE(::write(fd, head.data(), 100000) == 100000);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::kill(pid, sig);
        BOOST_TEST(cktest::wait_exit_code(pid) == (sig == SIGINT ? 130 : 128 + SIGKILL));
        ::close(fd);
        BOOST_TEST(fs::is_empty(spool_dir));
        BOOST_TEST(out.entries().empty());
    }
}

// A terminal is neither where a model goes nor where one comes from (util-linux `script` gives
// ckhost a pseudo-terminal for both streams).
BOOST_AUTO_TEST_CASE(a_terminal_is_refused_as_either_stream) {
    cktest::TempDir dir;
    for (const std::string& args :
         {"-i " + sample_model().string() + " -o -", "-i - -o " + (dir / "o.gguf").string()}) {
        const std::string command = "script -qec \"" + cktest::ckhost_binary().string() +
                                    " --pipeline gguf:gguf " + args + "\" /dev/null > " +
                                    (dir / "tty.log").string() + " 2>&1";
        BOOST_TEST(WEXITSTATUS(std::system(command.c_str())) == 2, args);
        const auto log = cktest::read_file(dir / "tty.log");
        const std::string text(log.begin(), log.end());
        BOOST_TEST(contains(text, args.starts_with("-i -") ? "-i -: standard input is a terminal"
                                                           : "-o -: standard output is a terminal"),
                   text);
    }
    BOOST_TEST(dir.entries().size() == 1u);  // tty.log
}

// `./-` (any path that is not exactly '-') is a file called '-', for input and output.
BOOST_AUTO_TEST_CASE(a_path_ending_in_dash_is_a_file) {
    cktest::TempDir dir;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample_model().string(), "-o", (dir / "-").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(r.out.empty());
    BOOST_TEST(cktest::files_equal(sample_model().string(), dir / "-"));
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", (dir / "-").string(), "-o", (dir / "b.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(sample_model().string(), dir / "b.gguf"));
}

// A batch job's standard streams belong to the batch; inspect and verify take files only.
BOOST_AUTO_TEST_CASE(batch_inspect_and_verify_refuse_dash) {
    cktest::TempDir dir;
    std::ofstream(dir / "jobs.txt") << "gguf:gguf - " << (dir / "o.gguf").string() << "\n";
    auto r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "jobs.txt:1: a batch job cannot read standard input"), r.err);
    std::ofstream(dir / "jobs.json") << R"([{"pipeline": "gguf:gguf", "input": ")"
                                     << sample_model().string() << R"(", "output": "-"}])";
    r = cktest::run_ckhost({"batch", (dir / "jobs.json").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "job 1: a batch job cannot write standard output"), r.err);
    for (const char* command : {"inspect", "verify"}) {
        r = cktest::run_ckhost({command, "-"});
        BOOST_TEST(r.exit_code == 2, r.err);
        BOOST_TEST(contains(r.err, std::string(command) + " -: standard input is not supported"),
                   r.err);
    }
    BOOST_TEST(dir.entries().size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_standard_streams
