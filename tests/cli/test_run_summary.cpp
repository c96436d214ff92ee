// The summary after a successful conversion (issue 28): each output with its size, the bits per
// weight of a quantized output, the time; on stderr, not with -q, not in --json's stdout, not
// for --dry-run; on a terminal it follows the progress line rather than leaving it erased.
// Sizes and bits per weight are checked against the files and `ckhost inspect --json`.
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_run_summary {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

// An F16 model made by ckhost from the sample, so that quantizing it is a fresh quantization.
fs::path f16_model(const cktest::TempDir& dir) {
    const fs::path out = dir / "f16.gguf";
    auto r = cktest::run_ckhost({"-q", "--pipeline", "gguf:dequant[to=f16]:gguf", "-i",
                                 cktest::sample_model().string(), "-o", out.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return out;
}

// The bits per weight of a GGUF's tensors, from inspect: their bytes over their elements, as
// the summary prints it.
std::string bits_per_weight(const fs::path& file) {
    auto r = cktest::run_ckhost({"inspect", "--json", "--tensors", file.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    double elements = 0;
    for (const json& t : doc["tensors"]) {
        double n = 1;
        for (const json& d : t["shape"]) n *= d.get<double>();
        elements += n;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.2f bits per weight",
                  8.0 * doc["tensor_bytes"].get<double>() / elements);
    return text;
}

std::string wrote_line(const fs::path& file) {
    return "ckhost: wrote " + file.string() + ": " + std::to_string(fs::file_size(file)) +
           " bytes (";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_summary)

BOOST_AUTO_TEST_CASE(a_quantized_output_gets_its_size_bits_per_weight_and_time) {
    cktest::TempDir dir;
    const fs::path in = f16_model(dir), out = dir / "q4.gguf";
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:quantize[mix=q4_k_m]:gguf", "-i", in.string(), "-o", out.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, wrote_line(out)), r.err);
    BOOST_TEST(contains(r.err, bits_per_weight(out)), r.err << " vs " << bits_per_weight(out));
    BOOST_TEST(std::regex_search(r.err, std::regex(R"(ckhost: done in [0-9]+\.[0-9]{2} s, )")),
               r.err);
    BOOST_TEST(r.out.empty(), r.out);
    // The short command says the same.
    r = cktest::run_ckhost({"quantize", in.string(), (dir / "q8.gguf").string(), "q8_0"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, wrote_line(dir / "q8.gguf")), r.err);
    BOOST_TEST(contains(r.err, bits_per_weight(dir / "q8.gguf")), r.err);
}

// Float outputs have no bits per weight to tell; a writer of several files names each.
BOOST_AUTO_TEST_CASE(every_output_is_named_and_float_outputs_have_no_bits_per_weight) {
    cktest::TempDir dir;
    const fs::path in = f16_model(dir);
    auto r = cktest::run_ckhost({"--pipeline", "gguf:dequant:headpack:bump", "-i", in.string(),
                                 "-o", (dir / "b/").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    for (const fs::path& file : {dir / "b" / "weights.bump", dir / "b" / "config.json"})
        BOOST_TEST(contains(r.err, wrote_line(file)), r.err);
    BOOST_TEST(contains(r.err, "ckhost: done in "), r.err);
    BOOST_TEST(!contains(r.err, "bits per weight"), r.err);
}

// -q: nothing; --json: the report alone on stdout; --dry-run and an up-to-date --update write
// nothing, so they have nothing to sum up.
BOOST_AUTO_TEST_CASE(no_summary_when_quiet_json_dry_run_or_up_to_date) {
    cktest::TempDir dir;
    const std::string in = cktest::sample_model().string();
    auto r = cktest::run_ckhost(
        {"-q", "--pipeline", "gguf:gguf", "-i", in, "-o", (dir / "a.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(r.err.empty(), r.err);
    r = cktest::run_ckhost(
        {"--json", "--pipeline", "gguf:gguf", "-i", in, "-o", (dir / "b.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(!contains(r.err, "ckhost: wrote"), r.err);
    BOOST_TEST(json::parse(r.out)["bytes_out"] == fs::file_size(dir / "b.gguf"));
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", in, "-o", (dir / "c.gguf").string(), "--dry-run"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(!contains(r.err, "ckhost: wrote"), r.err);
    for (int run = 0; run < 2; ++run) {
        r = cktest::run_ckhost(
            {"--pipeline", "gguf:gguf", "-i", in, "-o", (dir / "d.gguf").string(), "--update"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(contains(r.err, "ckhost: wrote") == (run == 0), r.err);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_run_summary
