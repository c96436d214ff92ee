// The short commands for frequent jobs (quantize, split, merge): each runs one pipeline through
// convert's machinery, so their outputs are llama-quantize's and llama-gguf-split's own files,
// byte for byte (../shared/testdata/quant and split), and their usage errors leave nothing behind.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_short_commands {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

struct QuantizeCase {
    std::string input;               // relative to the shared test data
    std::vector<std::string> flags;  // llama-quantize's, as the README of quant/ gives them
    std::string type;
    std::string expected;  // in quant/
};

std::vector<QuantizeCase> quantize_cases() {
    std::vector<QuantizeCase> all;
    for (const char* mix : {"q4_0", "q8_0", "q4_k_m", "q6_k", "bf16"})
        all.push_back(
            {"micro-llama-f16.gguf", {}, mix, std::string("micro-llama-f16.") + mix + ".gguf"});
    all.push_back(
        {"micro-llama-f16.gguf", {"--pure"}, "Q4_K_M", "micro-llama-f16.q4_k_m-pure.gguf"});
    all.push_back({"micro-llama-f16.gguf",
                   {"--output-tensor-type", "q8_0", "--token-embedding-type", "q8_0"},
                   "Q4_K_M",
                   "micro-llama-f16.q4_k_m-out_q8_0-embd_q8_0.gguf"});
    all.push_back({"micro-llama-q8_0.gguf",
                   {"--allow-requantize"},
                   "Q4_K_M",
                   "micro-llama-q8_0.requant.q4_k_m.gguf"});
    all.push_back({"quant/micro-odd-f16.gguf", {}, "Q3_K_M", "micro-odd-f16.q3_k_m.gguf"});
    return all;
}

// The three shards `ckhost split` wrote under `dir`, compared with llama-gguf-split's in `set`.
void check_shards(const fs::path& dir, const fs::path& set) {
    for (int k = 1; k <= 3; ++k) {
        const std::string name = "tiny-llama-q4_k_m-0000" + std::to_string(k) + "-of-00003.gguf";
        BOOST_TEST_REQUIRE(fs::exists(dir / name), name);
        BOOST_TEST(cktest::files_equal(dir / name, set / name), name);
    }
}

// A usage error: exit 2, the message naming the problem, nothing written in `dir`.
void check_refused(const std::vector<std::string>& args, const std::string& message,
                   const cktest::TempDir& dir) {
    const auto r = cktest::run_ckhost(args);
    BOOST_TEST(r.exit_code == 2, args[0] << ": " << r.err);
    BOOST_TEST(contains(r.err, message), r.err);
    BOOST_TEST(dir.entries().empty(), args[0] << " left files behind");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(short_commands)

// Each of llama-quantize's flags is the quantize stage option of the same meaning, THREADS is
// --threads: the output is llama-quantize's file, byte for byte.
BOOST_AUTO_TEST_CASE(quantize_writes_llama_quantizes_files,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    for (const QuantizeCase& c : quantize_cases()) {
        BOOST_TEST_CONTEXT(c.expected) {
            std::vector<std::string> args = {"-q", "quantize"};
            args.insert(args.end(), c.flags.begin(), c.flags.end());
            const fs::path out = dir / c.expected;
            args.insert(args.end(), {(root / c.input).string(), out.string(), c.type, "2"});
            const auto r = cktest::run_ckhost(args);
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            BOOST_TEST(cktest::files_equal(out, root / "quant" / c.expected));
        }
    }
}

// --dry-run and --json are convert's: the plan names the pipeline run, nothing is written.
BOOST_AUTO_TEST_CASE(quantize_is_convert_with_a_pipeline,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path input = *cktest::shared_data() / "micro-llama-f16.gguf";
    cktest::TempDir dir;
    auto r = cktest::run_ckhost(
        {"quantize", "--dry-run", "--pure", input.string(), (dir / "o.gguf").string(), "q4_k_m"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "quantize"), r.out);
    BOOST_TEST(dir.entries().empty());
    auto help = cktest::run_ckhost({"help", "quantize"});
    BOOST_TEST(help.exit_code == 0);
    BOOST_TEST(contains(help.out, "gguf:quantize[mix=TYPE,...]:gguf"), help.out);
    for (const std::string flag : {"--pure", "--output-tensor-type", "--token-embedding-type",
                                   "--leave-output-tensor", "--allow-requantize", "--force"})
        BOOST_TEST(contains(help.out, flag), flag);
}

BOOST_AUTO_TEST_CASE(split_writes_llama_gguf_splits_sets,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    const std::string input = (root / "tiny-llama-q4_k_m.gguf").string();
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"-q", "split", "--split-max-tensors", "15", input,
                                 (dir / "by-tensors" / "tiny-llama-q4_k_m").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_shards(dir / "by-tensors", root / "split" / "by-tensors");
    r = cktest::run_ckhost({"-q", "split", "--split-max-size", "5M", input,
                            (dir / "by-size" / "tiny-llama-q4_k_m").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_shards(dir / "by-size", root / "split" / "by-size");
    BOOST_TEST(
        cktest::files_equal(root / "split" / "by-size" / "tiny-llama-q4_k_m-00001-of-00003.gguf",
                            dir / "by-size" / "tiny-llama-q4_k_m-00001-of-00003.gguf"));
}

BOOST_AUTO_TEST_CASE(merge_writes_llama_gguf_splits_file,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path split = *cktest::shared_data() / "split";
    cktest::TempDir dir;
    for (const std::string set : {"by-size", "by-tensors"}) {
        const fs::path out = dir / (set + ".gguf");
        auto r = cktest::run_ckhost(
            {"-q", "merge", (split / set / "tiny-llama-q4_k_m-00001-of-00003.gguf").string(),
             out.string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(cktest::files_equal(out, split / "tiny-llama-q4_k_m.merged.gguf"), set);
    }
}

BOOST_AUTO_TEST_CASE(usage_errors_name_the_problem_and_write_nothing) {
    const std::string input = cktest::sample_model().string();
    cktest::TempDir dir;
    const std::string out = (dir / "o.gguf").string();
    check_refused({"quantize", input, out}, "missing TYPE", dir);
    check_refused({"quantize", input, out, "q4km"}, "q4_k_m", dir);
    check_refused({"quantize", input, out, "q4_k_m", "zero"}, "THREADS 'zero'", dir);
    check_refused({"quantize", input, out, "q4_k_m", "0"}, "THREADS '0'", dir);
    check_refused({"quantize", "--threads", "2", input, out, "q4_k_m", "3"}, "--threads both", dir);
    check_refused({"split", "--split-max-tensors", "2", "--split-max-size", "1M", input,
                   (dir / "s").string()},
                  "--split-max-tensors and --split-max-size", dir);
    check_refused({"split", input}, "missing OUTPUT_PREFIX", dir);
    check_refused({"merge", input}, "missing OUTPUT", dir);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_short_commands
