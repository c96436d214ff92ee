// The output does not depend on the thread count: every pipeline the suite exercises, run with
// --threads 1, 2 and 7, writes the same bytes (compared by the SHA-256 the JSON report lists)
// and reports the same figures (repack's accuracy table) and warnings. Seven threads on a
// two-core machine also shakes out work split by thread count rather than by data.
//
// Then the runner that computes tensors ahead of the writer: it honours --max-memory and the
// plugins' concurrency flag, and a worker's failure or Ctrl-C still leaves nothing behind.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_threads {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using nlohmann::json;

namespace {

struct Case {
    std::string pipeline;
    fs::path input;
    std::string output;  // a file name, or "dir/" for writers that make a directory
};

// What must not change with the thread count: the output files' SHA-256 (by file name) and
// every plugin report (`reports`).
json fingerprint(const Case& c, unsigned threads) {
    cktest::TempDir out;
    auto r =
        cktest::run_ckhost({"--json", "--quiet", "--threads", std::to_string(threads), "--pipeline",
                            c.pipeline, "-i", c.input.string(), "-o", (out / c.output).string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, c.pipeline << " --threads " << threads << ": " << r.err);
    const json report = json::parse(r.out);
    BOOST_TEST(report.at("threads").get<unsigned>() == threads);
    for (const json& stage : report.at("stages"))
        BOOST_TEST(stage.at("seconds").get<double>() >= 0.0, stage.dump());
    json sums = json::object();
    for (const auto& [path, sum] : report.at("checksums").items())
        sums[fs::path(path).filename().string()] = sum;
    BOOST_TEST_REQUIRE(!sums.empty(), c.pipeline);
    return {{"checksums", sums},
            {"reports", report.value("reports", json::object())},
            {"warnings", report.at("warnings")}};
}

void check_same_for_every_thread_count(const std::vector<Case>& cases) {
    for (const Case& c : cases) {
        const json one = fingerprint(c, 1);
        for (unsigned threads : {2u, 7u}) {
            const json many = fingerprint(c, threads);
            BOOST_TEST(many == one, c.pipeline << " on " << c.input.filename().string()
                                               << ": --threads " << threads
                                               << " differs from --threads 1:\n"
                                               << many.dump(1) << "\nvs\n"
                                               << one.dump(1));
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(threads)

BOOST_AUTO_TEST_CASE(every_pipeline_writes_the_same_bytes_for_any_thread_count) {
    const fs::path q4km = cktest::examples_dir() / "micro-llama-q4_k_m.gguf";
    check_same_for_every_thread_count({
        {"gguf:gguf", q4km, "o.gguf"},
        {"gguf:headpack:bump", q4km, "b/"},
        {"gguf:headpack[align=512]:bump", q4km, "b/"},
        {"gguf:dequant:gguf", q4km, "o.gguf"},
        {"gguf:dequant[to=f16]:safetensors", q4km, "o.safetensors"},
        {"gguf:dequant[to=bf16,skip=blk.1.*]:gguf", q4km, "o.gguf"},
        {"gguf:dequant[to=f32]:headpack:bump", q4km, "b/"},
        {"gguf:dequant:quantize[to=q8_0]:gguf", q4km, "o.gguf"},
        {"gguf:dequant:quantize[to=q4_0,only=blk.*]:gguf", q4km, "o.gguf"},
        {"gguf:repack[to=int8]:safetensors", q4km, "o.safetensors"},
        {"gguf:dequant:repack[to=nf4]:safetensors", q4km, "o.safetensors"},
        {"gguf:gguflite", q4km, "o.glft"},
        {"gguf:gguflite[scheme=q8]", q4km, "o.glft"},
        {"gguf:gguflite[scheme=f16]", q4km, "o.glft"},
        {"gguf:gguflite[scheme=f32,report=1]", q4km, "o.glft"},
        {"gguf:dequant[to=f16]:gguflite[scheme=q4]", q4km, "o.glft"},
    });
}

// Larger tensors (a 32000 x 288 embedding) than the sample, so every kernel's work is split
// into many pool items. The same pipelines as above on larger files: Release suite only.
BOOST_AUTO_TEST_CASE(larger_models_too, *utf::precondition(cktest::SharedDataPresent()) *
                                            utf::precondition(cktest::NotASanitizerRun())) {
    const fs::path root = *cktest::shared_data();
    const fs::path tiny = root / "tiny-llama-q4_0.gguf";
    const fs::path f16 = root / "micro-llama-f16.gguf";
    const fs::path q8 = root / "micro-llama-q8_0.gguf";
    check_same_for_every_thread_count({
        {"gguf:dequant[to=f32]:gguf", tiny, "o.gguf"},
        {"gguf:dequant[to=f16]:gguf", tiny, "o.gguf"},
        {"gguf:repack[to=nf4]:safetensors", tiny, "o.safetensors"},
        {"gguf:dequant:repack[to=int8]:safetensors", tiny, "o.safetensors"},
        {"gguf:gguflite[scheme=q8]", tiny, "o.glft"},
        {"gguf:dequant:quantize[to=q8_0]:gguf", tiny, "o.gguf"},
        {"gguf:quantize[to=q8_0]:gguf", f16, "o.gguf"},
        {"gguf:quantize[to=q4_0]:gguf", f16, "o.gguf"},
        {"gguf:gguflite[scheme=q4]", f16, "o.glft"},
        {"gguf:repack[to=int8]:safetensors", q8, "o.safetensors"},
    });
}

// The runner's own summary of a conversion (`compute_ahead` in the JSON report).
struct Run {
    int exit_code;
    std::string err;
    json ahead;
    std::string sha256;
};

Run convert(const std::vector<std::string>& options, const std::string& pipeline,
            const std::string& output = "o.gguf") {
    cktest::TempDir out;
    std::vector<std::string> args = {"--json",
                                     "--plugin-dir",
                                     cktest::test_plugin_dir().string(),
                                     "--pipeline",
                                     pipeline,
                                     "-i",
                                     (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string(),
                                     "-o",
                                     (out / output).string()};
    args.insert(args.end(), options.begin(), options.end());
    auto r = cktest::run_ckhost(args);
    Run run{r.exit_code, r.err, {}, {}};
    if (r.exit_code == 0) {
        const json report = json::parse(r.out);
        run.ahead = report.at("compute_ahead");
        run.sha256 = report.at("checksums").begin()->get<std::string>();
    }
    BOOST_TEST((r.exit_code == 0 || out.entries().empty()), "output left behind: " << r.err);
    return run;
}

BOOST_AUTO_TEST_CASE(concurrent_stages_are_computed_ahead_within_the_window) {
    const Run one = convert({"--threads", "1"}, "gguf:repack[to=int8]:safetensors", "o.st");
    BOOST_TEST_REQUIRE(one.exit_code == 0, one.err);
    BOOST_TEST(one.ahead["concurrent"].get<bool>() == false);
    BOOST_TEST(one.ahead["why_not"].get<std::string>() == "one thread");
    BOOST_TEST(one.ahead["peak_tensors"].get<unsigned>() == 1u);

    const Run seven = convert({"--threads", "7"}, "gguf:repack[to=int8]:safetensors", "o.st");
    BOOST_TEST_REQUIRE(seven.exit_code == 0, seven.err);
    BOOST_TEST(seven.ahead["concurrent"].get<bool>());
    BOOST_TEST(seven.ahead["window"].get<unsigned>() == 7u);
    BOOST_TEST(seven.ahead["peak_tensors"].get<unsigned>() > 1u, seven.ahead.dump());
    BOOST_TEST(seven.ahead["peak_tensors"].get<unsigned>() <= 7u, seven.ahead.dump());
    BOOST_TEST(seven.sha256 == one.sha256);
}

BOOST_AUTO_TEST_CASE(a_small_memory_budget_still_completes_one_tensor_at_a_time) {
    const Run reference = convert({"--threads", "1"}, "gguf:dequant:quantize:gguf");
    BOOST_TEST_REQUIRE(reference.exit_code == 0, reference.err);
    for (const char* budget : {"1", "100K"}) {
        const Run small =
            convert({"--threads", "7", "--max-memory", budget}, "gguf:dequant:quantize:gguf");
        BOOST_TEST_REQUIRE(small.exit_code == 0, small.err);
        BOOST_TEST(small.ahead["concurrent"].get<bool>());
        BOOST_TEST(small.ahead["max_memory"].get<std::uint64_t>() ==
                   (std::string(budget) == "1" ? 1u : 100u * 1024));
        // A budget of one byte: every item (a tensor, or a row block of one row) is larger
        // than it, so each runs alone. 100K: tensors travel in row blocks of a 14th of it (two
        // blocks' bytes per thread), and as many as fit run at once.
        if (std::string(budget) == "1")
            BOOST_TEST(small.ahead["peak_tensors"].get<unsigned>() == 1u, small.ahead.dump());
        else
            BOOST_TEST(small.ahead["peak_bytes"].get<std::uint64_t>() <= 100u * 1024,
                       small.ahead.dump());
        BOOST_TEST(small.ahead["row_blocks"].get<std::uint64_t>() > 0u, small.ahead.dump());
        BOOST_TEST(small.sha256 == reference.sha256);
    }
    // A budget that fits a few tensors: more than one at a time, never over the budget unless
    // a single tensor is larger.
    const Run some =
        convert({"--threads", "7", "--max-memory", "3M"}, "gguf:dequant:quantize:gguf");
    BOOST_TEST_REQUIRE(some.exit_code == 0, some.err);
    BOOST_TEST(some.ahead["peak_bytes"].get<std::uint64_t>() <= 3u << 20, some.ahead.dump());
    BOOST_TEST(some.sha256 == reference.sha256);
    // The environment sets it too.
    ::setenv("CKHOST_MAX_MEMORY", "1", 1);
    const Run env = convert({"--threads", "7"}, "gguf:dequant:quantize:gguf");
    ::unsetenv("CKHOST_MAX_MEMORY");
    BOOST_TEST_REQUIRE(env.exit_code == 0, env.err);
    BOOST_TEST(env.ahead["max_memory"].get<std::uint64_t>() == 1u);
}

BOOST_AUTO_TEST_CASE(a_stage_not_declared_concurrent_is_called_from_one_thread) {
    // testkit throws if two calls ever overlap; sleeping widens the window for a host bug.
    const Run r = convert({"--threads", "7"}, "gguf:testkit[sleep_ms=5,groups=pairs]:gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(r.ahead["concurrent"].get<bool>() == false);
    BOOST_TEST(r.ahead["why_not"].get<std::string>() ==
               "stage 'testkit' is not declared concurrent");
    BOOST_TEST(r.ahead["peak_tensors"].get<unsigned>() == 1u);
}

BOOST_AUTO_TEST_CASE(declared_groups_are_computed_together_and_written_in_order) {
    const Run plain = convert({"--threads", "1"}, "gguf:gguf");
    BOOST_TEST_REQUIRE(plain.exit_code == 0, plain.err);
    for (const char* stage : {"testkit", "testkit_concurrent"}) {
        const Run grouped =
            convert({"--threads", "7"}, std::string("gguf:") + stage + "[groups=pairs]:gguf");
        BOOST_TEST_REQUIRE(grouped.exit_code == 0, grouped.err);
        BOOST_TEST(grouped.sha256 == plain.sha256, stage);
    }
    for (const char* bad : {"overlap", "outside"}) {
        const Run r = convert({}, std::string("gguf:testkit[groups=") + bad + "]:gguf");
        BOOST_TEST(r.exit_code == 3, r.err);
        BOOST_TEST(cktest::contains(r.err, "declared a tensor group with"), r.err);
        BOOST_TEST(cktest::contains(r.err, "(a plugin bug)"), r.err);
    }
}

BOOST_AUTO_TEST_CASE(a_worker_failure_reaches_the_main_thread_and_leaves_nothing) {
    for (const char* with : {"ck", "std", "int"}) {
        const Run r =
            convert({"--threads", "7"},
                    std::string("gguf:testkit_concurrent[fail_at=9,fail_with=") + with + "]:gguf");
        BOOST_TEST(r.exit_code == 1, with << ": " << r.err);
        BOOST_TEST(cktest::contains(r.err, with == std::string("ck") ? "testkit failed on purpose"
                                           : with == std::string("std")
                                               ? "testkit threw a std::runtime_error on purpose"
                                               : "unknown exception"),
                   r.err);
    }
}

BOOST_AUTO_TEST_CASE(ctrl_c_stops_every_worker_and_leaves_nothing) {
    cktest::TempDir out;
    // 21 tensors at 300 ms each, 4 at a time: about 1.6 s in all; the signal comes at 0.7 s.
    pid_t pid =
        cktest::spawn_ckhost({"--threads", "4", "--plugin-dir", cktest::test_plugin_dir().string(),
                              "--pipeline", "gguf:testkit_concurrent[sleep_ms=300]:gguf", "-i",
                              (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string(), "-o",
                              (out / "o.gguf").string()});
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    BOOST_TEST_REQUIRE(!out.entries().empty());  // mid-write: the temporary file exists
    ::kill(pid, SIGINT);
    BOOST_TEST(cktest::wait_exit_code(pid) == 130);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(bad_memory_budgets_are_usage_errors) {
    for (const char* bad : {"0", "-1", "x", "12Q", "0.5", "1e400"}) {
        auto r = cktest::run_ckhost({"plugins", "--max-memory", bad});
        BOOST_TEST(r.exit_code == 2, bad << ": " << r.err);
    }
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", "x", "-o", "y", "--max-memory", "lots"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(cktest::contains(r.err, "--max-memory lots: expected a size"), r.err);
    ::setenv("CKHOST_MAX_MEMORY", "0", 1);
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", "x", "-o", "y"});
    ::unsetenv("CKHOST_MAX_MEMORY");
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(cktest::contains(r.err, "CKHOST_MAX_MEMORY=0: expected a size"), r.err);
}

BOOST_AUTO_TEST_CASE(bad_thread_counts_are_usage_errors) {
    for (const char* bad : {"0", "-2", "x", "5000"}) {
        auto r = cktest::run_ckhost({"plugins", "--threads", bad});
        BOOST_TEST(r.exit_code == 2, bad << ": " << r.err);
        BOOST_TEST(cktest::contains(r.err, "threads"), r.err);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_threads
