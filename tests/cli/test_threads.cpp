// The output does not depend on the thread count: every pipeline the suite exercises, run with
// --threads 1, 2 and 7, writes the same bytes (compared by the SHA-256 the JSON report lists)
// and reports the same figures (repack's accuracy table). Seven threads on a two-core machine
// also shakes out work split by thread count rather than by data.
#include <boost/test/unit_test.hpp>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

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
    return {{"checksums", sums}, {"reports", report.value("reports", json::object())}};
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
// into many pool items.
BOOST_AUTO_TEST_CASE(larger_models_too, *utf::precondition(cktest::SharedDataPresent())) {
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

BOOST_AUTO_TEST_CASE(bad_thread_counts_are_usage_errors) {
    for (const char* bad : {"0", "-2", "x", "5000"}) {
        auto r = cktest::run_ckhost({"plugins", "--threads", bad});
        BOOST_TEST(r.exit_code == 2, bad << ": " << r.err);
        BOOST_TEST(cktest::contains(r.err, "threads"), r.err);
    }
}

BOOST_AUTO_TEST_SUITE_END()
