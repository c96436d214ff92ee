// Byte identity with the reference converter's output (tests/data/golden, copied from
// ../shared/testdata/golden): weights.bump and config.json, through gguf:bump and
// gguf:headpack:bump, and the output paths -o DIR/, -o path/name.bump and bump[config=PATH].
#include <boost/test/unit_test.hpp>

#include "bump_test_models.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_bump_golden {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

fs::path golden(const std::string& model) {
    return cktest::test_data() / "golden" / model;
}

// First word of a `sha256sum` line.
std::string golden_sha256(const std::string& model) {
    std::string line = cktest::read_text(golden(model) / "weights.bump.sha256");
    return line.substr(0, line.find(' '));
}

std::uint64_t golden_size(const std::string& model) {
    return std::stoull(cktest::read_text(golden(model) / "weights.bump.size"));
}

void expect_golden_hash(const std::string& model, const std::string& pipeline) {
    cktest::TempDir out;
    auto input = *cktest::shared_data() / (model + ".gguf");
    auto r = cktest::run_ckhost(
        {"--pipeline", pipeline, "-i", input.string(), "-o", out.path().string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(fs::file_size(out / "weights.bump") == golden_size(model));
    BOOST_TEST(cktest::sha256_of_file(out / "weights.bump") == golden_sha256(model));
    BOOST_TEST(cktest::files_equal(out / "config.json", golden(model) / "config.json"));
    auto v = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(v.exit_code == 0, v.err);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bump_golden)

BOOST_AUTO_TEST_CASE(q4_k_m_through_gguf_bump_into_a_directory) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:bump", "-i", sample(), "-o", (out / "model").string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(out / "model" / "weights.bump",
                                   golden("micro-llama-q4_k_m") / "weights.bump"));
    BOOST_TEST(cktest::files_equal(out / "model" / "config.json",
                                   golden("micro-llama-q4_k_m") / "config.json"));
    // Its output.weight is Q6_K, token_embd Q4_K: dropped, with a warning (difference 5).
    BOOST_TEST(contains(r.err, "untied output.weight"), r.err);
}

BOOST_AUTO_TEST_CASE(q4_k_m_through_headpack_into_a_named_file) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump", "-i", sample(), "-o",
                                 (out / "m.bump").string(), "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(r.err.empty(), r.err);
    // head_dim 64 needs no padding at align=64: the same bytes as without headpack.
    BOOST_TEST(cktest::files_equal(out / "m.bump", golden("micro-llama-q4_k_m") / "weights.bump"));
    BOOST_TEST(
        cktest::files_equal(out / "config.json", golden("micro-llama-q4_k_m") / "config.json"));
    BOOST_TEST(out.entries().size() == 2u);
}

BOOST_AUTO_TEST_CASE(config_option_puts_config_json_elsewhere) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline",
                                 "gguf:bump[config=" + (out / "meta" / "cfg.json").string() + "]",
                                 "-i", sample(), "-o", (out / "w.bump").string(), "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(out / "meta" / "cfg.json",
                                   golden("micro-llama-q4_k_m") / "config.json"));
    BOOST_TEST(!fs::exists(out / "config.json"));
}

BOOST_AUTO_TEST_CASE(existing_outputs_need_force) {
    cktest::TempDir out;
    cktest::write_file(out / "config.json", {'{', '}'});
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:bump", "-i", sample(), "-o", out.path().string() + "/", "--quiet"});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "config.json"), r.err);
    BOOST_TEST(out.entries().size() == 1u);  // neither file written
    r = cktest::run_ckhost({"--pipeline", "gguf:bump", "-i", sample(), "-o",
                            out.path().string() + "/", "--quiet", "--force"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(
        cktest::files_equal(out / "config.json", golden("micro-llama-q4_k_m") / "config.json"));
}

BOOST_AUTO_TEST_CASE(dry_run_lists_both_outputs_and_writes_nothing) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump", "-i", sample(), "-o",
                                 out.path().string() + "/", "--dry-run"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "output: " + (out / "weights.bump").string()), r.out);
    BOOST_TEST(contains(r.out, "output: " + (out / "config.json").string()), r.out);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(micro_llama_f32_matches_reference_hash,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    expect_golden_hash("micro-llama-f32", "gguf:bump");
    expect_golden_hash("micro-llama-f32", "gguf:headpack:bump");
}

BOOST_AUTO_TEST_CASE(tiny_llama_q4_k_m_matches_reference_hash,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    expect_golden_hash("tiny-llama-q4_k_m", "gguf:bump");
    expect_golden_hash("tiny-llama-q4_k_m", "gguf:headpack:bump");
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_bump_golden
