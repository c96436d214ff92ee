// The short commands for frequent jobs (quantize, split, merge): each runs one pipeline through
// convert's machinery, so their outputs are llama-quantize's and llama-gguf-split's own files,
// byte for byte (../shared/testdata/quant and split), and their usage errors leave nothing behind.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_short_commands {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using nlohmann::json;

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

namespace {

// A GGUF's metadata as inspect --json lists it, in file order, and the bytes of its tensor data.
struct GgufParts {
    json metadata;
    std::vector<unsigned char> data;
};

GgufParts gguf_parts(const fs::path& file) {
    auto r = cktest::run_ckhost({"inspect", "--json", file.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    const auto bytes = cktest::read_file(file);
    const auto start = doc["facts"]["data_start"].get<std::size_t>();
    return {doc["metadata"], {bytes.begin() + static_cast<long>(start), bytes.end()}};
}

}  // namespace

// llama-quantize's --override-kv KEY=TYPE:VALUE: int is stored as u32, float as f32, bool and str
// as they are; like gguf_set_val_*, each overridden key leaves its place and ends the metadata,
// in the order given. Checked against llama-quantize's own file without overrides: the same
// tensor bytes, the same keys but the overridden ones, which follow in order.
BOOST_AUTO_TEST_CASE(quantize_override_kv_sets_keys_as_llama_quantize_does,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    const fs::path out = dir / "o.gguf";
    auto r = cktest::run_ckhost(
        {"-q", "quantize", "--override-kv", "tokenizer.ggml.add_bos_token=bool:false",
         "--override-kv", "llama.context_length=int:4096", "--override-kv", "my.scale=float:0.1",
         "--override-kv", "general.name=str:Tiny, tuned [v2]", "--override-kv",
         "general.architecture=str:llama", (root / "micro-llama-f16.gguf").string(), out.string(),
         "Q8_0"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const GgufParts ours = gguf_parts(out);
    const GgufParts theirs = gguf_parts(root / "quant" / "micro-llama-f16.q8_0.gguf");
    BOOST_TEST((ours.data == theirs.data));
    const std::vector<std::string> moved = {"tokenizer.ggml.add_bos_token", "llama.context_length",
                                            "my.scale", "general.name"};
    json expected = json::array();
    for (const json& kv : theirs.metadata)
        if (std::find(moved.begin(), moved.end(), kv["key"]) == moved.end()) expected.push_back(kv);
    const json overrides = json::parse(R"([
        {"key": "tokenizer.ggml.add_bos_token", "type": "bool", "value": false},
        {"key": "llama.context_length", "type": "u32", "value": 4096},
        {"key": "general.name", "type": "str", "value": "Tiny, tuned [v2]"}])");
    BOOST_TEST_REQUIRE(ours.metadata.size() == expected.size() + moved.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        BOOST_TEST(ours.metadata[i] == expected[i], i);
    const json& tail = ours.metadata;
    const std::size_t at = expected.size();
    BOOST_TEST(tail[at] == overrides[0]);
    BOOST_TEST(tail[at + 1] == overrides[1]);
    BOOST_TEST(tail[at + 2]["key"] == "my.scale");
    BOOST_TEST(tail[at + 2]["type"] == "f32");
    BOOST_TEST(tail[at + 2]["value"].get<double>() == static_cast<double>(0.1f));
    BOOST_TEST(tail[at + 3] == overrides[2]);
}

// llama-quantize's file type number is its name (`15` is Q4_K_M); a near miss names the type.
BOOST_AUTO_TEST_CASE(quantize_takes_file_type_numbers,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"-q", "quantize", (root / "micro-llama-f16.gguf").string(),
                                 (dir / "15.gguf").string(), "15"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(
        cktest::files_equal(dir / "15.gguf", root / "quant" / "micro-llama-f16.q4_k_m.gguf"));
}

// Each bad --override-kv is a usage error naming it and what is wrong, before anything is read.
BOOST_AUTO_TEST_CASE(bad_override_kv_is_refused) {
    const std::string input = cktest::sample_model().string();
    cktest::TempDir dir;
    const std::string out = (dir / "o.gguf").string();
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"general.name", "general.name: expected KEY=TYPE:VALUE"},
        {"=int:1", "=int:1: expected KEY=TYPE:VALUE"},
        {"x=int:12abc", "'12abc' is not a whole decimal number"},
        {"x=int:-1", "stores an int override as u32, so -1 would not be kept"},
        {"x=int:4294967296", "so 4294967296 would not be kept"},
        {"x=long:5", "TYPE must be int, float, bool or str"},
        {"x=bool:yes", "a bool is true or false, not 'yes'"},
        {"x=float:1e39", "1e39 is beyond f32's range"},
        {"x=float:", "'' is not a number"},
        {"a*b=int:1", "a key with a glob character"},
        {"split.count=int:2", "split.* keys describe a llama-gguf-split set"},
        {"general.name=int:3", "must be of type str, not u32"},
    };
    for (const auto& [given, message] : bad)
        check_refused(
            {"quantize", "--allow-requantize", "--override-kv", given, input, out, "q8_0"}, message,
            dir);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_short_commands
