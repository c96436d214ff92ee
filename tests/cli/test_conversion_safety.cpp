// Output is atomic: a conversion that fails halfway, a bad input, a refused overwrite or a
// Ctrl-C leaves nothing behind; --dry-run writes nothing at all.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "io/checksum.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_conversion_safety {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}
std::string plugin_dir() {
    return cktest::test_plugin_dir().string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(conversion_safety)

BOOST_AUTO_TEST_CASE(failure_halfway_leaves_nothing) {
    cktest::TempDir out;
    // Tensor 15 of 21: the writer has already streamed most of the file when the stage fails.
    auto r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline",
                                 "gguf:testkit[fail_at=15]:gguf", "-i", sample(), "-o",
                                 (out / "new" / "dir" / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(out.entries().empty(),
               "left: " << out.entries().size() << " entries, directories included");
}

BOOST_AUTO_TEST_CASE(truncated_input_is_exit_1_with_no_output) {
    cktest::TempDir out;
    auto r =
        cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i",
                            (cktest::test_data() / "bad" / "trunc_mid_tensor_data.gguf").string(),
                            "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "runs past the end of the file"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(existing_output_needs_force) {
    cktest::TempDir out;
    cktest::write_file(out / "o.gguf", {'o', 'l', 'd'});
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "--force"), r.err);
    BOOST_TEST(cktest::read_file(out / "o.gguf").size() == 3u);
    BOOST_TEST(out.entries().size() == 1u);
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "o.gguf").string(), "--force"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(sample(), out / "o.gguf"));
}

BOOST_AUTO_TEST_CASE(dry_run_prints_the_plan_and_writes_nothing) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline", "gguf:testkit:gguf",
                                 "-i", sample(), "-o", (out / "o.gguf").string(), "--dry-run"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "plan: 3 stages, 21 tensors"), r.out);
    BOOST_TEST(contains(r.out, "blk.1.attn_v.weight: gguf q6_K"), r.out);
    BOOST_TEST(contains(r.out, "output: " + (out / "o.gguf").string()), r.out);
    BOOST_TEST(out.entries().empty());
}

// --dry-run with an output that exists: the plan is still printed, with a warning that the real
// run would stop there (it refused to plan before), and the file is left as it was.
BOOST_AUTO_TEST_CASE(dry_run_plans_even_when_the_output_exists) {
    cktest::TempDir out;
    cktest::write_file(out / "o.gguf", {1, 2, 3});
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "o.gguf").string(), "--dry-run"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "plan: 2 stages, 21 tensors"), r.out);
    BOOST_TEST(contains(r.err, "output file exists (use --force to overwrite)"), r.err);
    BOOST_TEST(contains(r.err, "the conversion would stop here"), r.err);
    BOOST_TEST(cktest::read_file(out / "o.gguf").size() == 3u);
    // Without --dry-run it still stops, exit 1.
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(cktest::read_file(out / "o.gguf").size() == 3u);
}

BOOST_AUTO_TEST_CASE(json_report_describes_the_conversion) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "o.gguf").string(), "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["pipeline"].get<std::string>() == "gguf:gguf");
    BOOST_TEST(doc["stages"].size() == 2u);
    BOOST_TEST(doc["plan"]["tensors"].size() == 21u);
    BOOST_TEST(doc["bytes_in"].get<std::uint64_t>() ==
               doc["tensor_bytes_out"].get<std::uint64_t>());
    std::string path = (out / "o.gguf").string();
    // The bytes written, header and padding included: here a copy of the input.
    BOOST_TEST(doc["bytes_out"].get<std::uint64_t>() == fs::file_size(path));
    BOOST_TEST(fs::file_size(path) == fs::file_size(sample()));
    BOOST_TEST(doc["checksums"][path].get<std::string>() == ckhost::sha256_file(sample()));
    BOOST_TEST(doc["warnings"].empty());
}

BOOST_AUTO_TEST_CASE(ctrl_c_stops_cleanly) {
    cktest::TempDir out;
    // 21 tensors at 100 ms each: the interrupt arrives while the output is half written.
    pid_t pid = cktest::spawn_ckhost({"--plugin-dir", plugin_dir(), "--pipeline",
                                      "gguf:testkit[sleep_ms=100]:gguf", "-i", sample(), "-o",
                                      (out / "o.gguf").string()});
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    BOOST_TEST_REQUIRE(!out.entries().empty());  // the temporary file exists: we are mid-write
    ::kill(pid, SIGINT);
    BOOST_TEST(cktest::wait_exit_code(pid) == 130);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(progress_only_on_a_terminal) {
    cktest::TempDir out;
    // Not a terminal (the test captures stderr): no progress, no escape codes; only the
    // summary of what was written (test_run_summary.cpp).
    auto quiet = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline",
                                     "gguf:testkit[sleep_ms=20]:gguf", "-i", sample(), "-o",
                                     (out / "a.gguf").string()});
    BOOST_TEST(quiet.exit_code == 0, quiet.err);
    BOOST_TEST(quiet.err.starts_with("ckhost: wrote " + (out / "a.gguf").string() + ": "),
               quiet.err);
    BOOST_TEST(!contains(quiet.err, "\r"), quiet.err);
    BOOST_TEST(!contains(quiet.err, "\033["), quiet.err);
    BOOST_TEST(!contains(quiet.err, "ETA"), quiet.err);
    // On a pseudo-terminal (util-linux `script`), the progress line is drawn.
    std::string command = "script -qec \"" + cktest::ckhost_binary().string() + " --plugin-dir " +
                          plugin_dir() + " --pipeline 'gguf:testkit[sleep_ms=20]:gguf' -i " +
                          sample() + " -o " + (out / "b.gguf").string() + "\" /dev/null > " +
                          (out / "tty.log").string() + " 2>&1";
    BOOST_TEST_REQUIRE(std::system(command.c_str()) == 0);
    auto log = cktest::read_file(out / "tty.log");
    std::string text(log.begin(), log.end());
    BOOST_TEST(contains(text, "ETA"), text);
    BOOST_TEST(contains(text, "MiB"), text);
    // The progress line gives way to the summary: it is not simply erased.
    const std::string after = text.substr(text.rfind("\033[K") + 3);
    BOOST_TEST(after.starts_with("ckhost: wrote " + (out / "b.gguf").string() + ": "), after);
    BOOST_TEST(cktest::files_equal(out / "a.gguf", out / "b.gguf"));
}

// An input truncated while it is mapped used to kill ckhost with SIGBUS (exit 135) and leave
// its temporary file, or blame the output ("write failed: Bad address"). The testkit stage
// truncates the input just before handing out tensor N, through every reader and through the
// paths that read the mapping: a copy into the output buffer, a SIMD kernel (repack), and a
// write() straight from the mapping (tensors over 4 MiB, which fails with EFAULT instead).
BOOST_AUTO_TEST_CASE(input_that_shrinks_while_read_is_a_clean_error,
                     *boost::unit_test::precondition(cktest::SigbusAddressReported())) {
    cktest::TempDir work;
    const std::string micro = sample();
    // One input per reader, made by ckhost from the sample.
    struct Made {
        const char* pipeline;
        const char* file;
    };
    for (const Made& m : {Made{"gguf:dequant:safetensors", "m.safetensors"},
                          Made{"gguf:headpack:bump", "b/weights.bump"},
                          Made{"gguf:dequant:gguflite[scheme=f16]", "m.glft"}}) {
        auto r = cktest::run_ckhost(
            {"--quiet", "--pipeline", m.pipeline, "-i", micro, "-o", (work / m.file).string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    }
    struct Case {
        std::string input;
        std::string pipeline;
    };
    std::vector<Case> cases = {
        {micro, "gguf:testkit[truncate_at=5]:gguf"},
        {micro, "gguf:testkit[truncate_at=3]:repack[to=int8]:safetensors"},
        {micro, "gguf:testkit[truncate_at=0]:headpack:bump"},
        {(work / "m.safetensors").string(), "safetensors:testkit[truncate_at=3]:safetensors"},
        {(work / "b/weights.bump").string(), "bump:testkit[truncate_at=3]:dequant:safetensors"},
        {(work / "m.glft").string(), "gguflite:testkit[truncate_at=3]:gguf"},
    };
    if (cktest::have_shared_data())  // token_embd is 4.6 MB: written straight from the map
        cases.push_back({(*cktest::shared_data() / "tiny-llama-q4_k_m.gguf").string(),
                         "gguf:testkit[truncate_at=0]:gguf"});
    for (const Case& c : cases) {
        cktest::TempDir in, out;
        const fs::path input = in / ("input" + fs::path(c.input).extension().string());
        fs::copy_file(c.input, input);
        auto r =
            cktest::run_ckhost({"--quiet", "--plugin-dir", plugin_dir(), "--pipeline", c.pipeline,
                                "-i", input.string(), "-o", (out / "new" / "o.out").string()});
        BOOST_TEST(r.exit_code == 1, c.pipeline << ": " << r.err);
        BOOST_TEST(contains(r.err, input.string() + ": the file changed while being read"),
                   c.pipeline << ": " << r.err);
        BOOST_TEST(out.entries().empty(), c.pipeline << ": output left behind");
        BOOST_TEST(in.entries().size() == 1u, c.pipeline << ": temporary file beside the input");
    }
}

// Past `ulimit -f` ckhost used to die of SIGXFSZ (exit 153) and leave its temporary file.
BOOST_AUTO_TEST_CASE(file_size_limit_is_a_clean_error) {
    cktest::TempDir out;
    const std::string target = (out / "o.gguf").string();
    // 512 KiB of the 1.3 MB sample may be written; the shell sets the limit, then becomes ckhost.
    auto r = cktest::run_program(
        "sh", {"-c", "ulimit -f 1024; exec \"$0\" \"$@\"", cktest::ckhost_binary().string(),
               "--pipeline", "gguf:gguf", "-i", sample(), "-o", target});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, target + ": write failed: File too large"), r.err);
    BOOST_TEST(out.entries().empty());
}

// --json used to print invalid JSON when a plugin reported an invalid value. Context::report
// now refuses it at the call: the conversion fails (exit 3, a plugin bug) naming the key, and
// nothing is written. A valid report and a note come through.
BOOST_AUTO_TEST_CASE(plugin_reports_are_valid_json) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--json", "--pipeline",
                                 "gguf:testkit[report=garbage]:gguf", "-i", sample(), "-o",
                                 (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 3, r.err);
    BOOST_TEST(contains(r.err, "not valid JSON under 'testkit'"), r.err);
    // The failure's error document (docs/json.md).
    const auto failure = nlohmann::json::parse(r.out);
    BOOST_TEST(failure["ok"] == false, r.out);
    BOOST_TEST(failure["error"]["exit_code"] == 3, r.out);
    BOOST_TEST(out.entries().empty());

    r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--json", "--pipeline",
                            "gguf:testkit[report=valid]:gguf", "-i", sample(), "-o",
                            (out / "o.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["reports"]["testkit"]["ok"].get<bool>());
    BOOST_TEST(doc["notes"][0].get<std::string>() == "testkit: planned 21 tensors");
    // Without --json the note goes to stderr.
    r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline",
                            "gguf:testkit[report=valid]:gguf", "-i", sample(), "-o",
                            (out / "p.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "testkit: planned 21 tensors"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_conversion_safety
