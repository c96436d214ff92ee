// `ckhost inspect` and `ckhost verify` on real files.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "inspect_output.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_inspect {

using cktest::contains;

namespace {
std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}
}  // namespace

BOOST_AUTO_TEST_SUITE(inspect)

BOOST_AUTO_TEST_CASE(text_form) {
    auto r = cktest::run_ckhost({"inspect", sample()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    // Aligned columns (key, type, value); tests/cli/test_inspect_readable.cpp checks them.
    const std::string text = cktest::squeezed(r.out);
    BOOST_TEST(contains(text, "  general.architecture  str  \"llama\"\n"), r.out);
    BOOST_TEST(contains(text, "  tokenizer.ggml.tokens  arr[str]  1,024 items [\"<unk>\", \"<s>\""),
               r.out);
    BOOST_TEST(contains(r.out, "tensors: 21"), r.out);
    BOOST_TEST(contains(text, "  q6_K  3  491,520  393.8 KiB\n"), r.out);
    BOOST_TEST(contains(r.out, "data start: 23296"), r.out);
    BOOST_TEST(!contains(r.out, "token_embd.weight"));  // the table needs --tensors
    auto t = cktest::run_ckhost({"inspect", sample(), "--tensors"});
    BOOST_TEST(contains(cktest::squeezed(t.out),
                        "  token_embd.weight  q4_K  [256, 1024]  262,144  147456  23296\n"),
               t.out);
}

BOOST_AUTO_TEST_CASE(json_form) {
    auto r = cktest::run_ckhost({"inspect", sample(), "--json", "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["format"].get<std::string>() == "gguf");
    BOOST_TEST(doc["tensor_count"].get<int>() == 21);
    BOOST_TEST(doc["tensors"].size() == 21u);
    BOOST_TEST(doc["bytes_by_type"]["q6_K"]["tensors"].get<int>() == 3);
    bool found = false;
    for (const auto& kv : doc["metadata"]) {
        if (kv["key"] != "tokenizer.ggml.tokens") continue;
        found = true;
        BOOST_TEST(kv["value"]["count"].get<int>() == 1024);
        BOOST_TEST(kv["value"]["items"][1].get<std::string>() == "<s>");
    }
    BOOST_TEST(found);
}

BOOST_AUTO_TEST_CASE(one_key_in_full) {
    auto r = cktest::run_ckhost({"inspect", sample(), "--kv", "tokenizer.ggml.tokens"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(std::count(r.out.begin(), r.out.end(), '\n') == 1024);
    auto missing = cktest::run_ckhost({"inspect", sample(), "--kv", "tokenizer.ggml.token"});
    BOOST_TEST(missing.exit_code == 1);
    BOOST_TEST(contains(missing.err, "did you mean 'tokenizer.ggml.tokens'"), missing.err);
}

BOOST_AUTO_TEST_CASE(unknown_files) {
    cktest::TempDir dir;
    cktest::write_file(dir / "notes.txt", {'h', 'e', 'l', 'l', 'o', '\n'});
    auto r = cktest::run_ckhost({"inspect", (dir / "notes.txt").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "not a bump, gguf, gguflite, hf or safetensors file"), r.err);
    r = cktest::run_ckhost({"inspect", (dir / "absent.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
}

BOOST_AUTO_TEST_CASE(verify) {
    auto r = cktest::run_ckhost({"verify", sample()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "OK"));
    r = cktest::run_ckhost(
        {"verify", (cktest::test_data() / "bad" / "trunc_mid_tensor_data.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_inspect
