// `ckhost inspect` and `ckhost verify` on real files.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>

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

namespace {

// A copy of the sample cut to its first `size` bytes.
std::filesystem::path cut_sample(const cktest::TempDir& dir, std::size_t size) {
    auto bytes = cktest::read_file(sample());
    BOOST_TEST_REQUIRE(size < bytes.size());
    bytes.resize(size);
    cktest::write_file(dir / "cut.gguf", bytes);
    return dir / "cut.gguf";
}

// The sample's metadata keys, in file order.
std::vector<std::string> sample_keys() {
    auto r = cktest::run_ckhost({"inspect", sample(), "--json"});
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    std::vector<std::string> keys;
    for (const auto& kv : doc["metadata"]) keys.push_back(kv["key"].get<std::string>());
    return keys;
}

// inspect fails as verify does (same exit code, same error); only stdout differs.
cktest::RunResult inspect_damaged(const std::filesystem::path& file,
                                  const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"inspect", file.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = cktest::run_ckhost(args);
    auto v = cktest::run_ckhost({"verify", file.string()});
    BOOST_TEST(r.exit_code != 0, file);
    BOOST_TEST(r.exit_code == v.exit_code, file);
    BOOST_TEST(r.err == v.err, file);
    return r;
}

}  // namespace

// Issue 28: as gguf-dump, inspect of a damaged GGUF prints what it could read, then the error.
BOOST_AUTO_TEST_CASE(a_damaged_gguf_shows_what_was_read_before_the_error) {
    cktest::TempDir dir;
    const auto bytes = cktest::read_file(sample());
    const std::string tokens = "tokenizer.ggml.tokens";
    const auto at = std::search(bytes.begin(), bytes.end(), tokens.begin(), tokens.end());
    BOOST_TEST_REQUIRE((at != bytes.end()));
    // Inside the array of token strings: the keys before it were read, it and the rest not.
    const auto key_end = static_cast<std::size_t>(at - bytes.begin()) + tokens.size();
    const auto file = cut_sample(dir, key_end + 4 + 4 + 8 + 100);
    auto r = inspect_damaged(file);
    BOOST_TEST(contains(r.err, "key 'tokenizer.ggml.tokens'"), r.err);
    BOOST_TEST(r.out.starts_with(file.string() +
                                 ": gguf (damaged: what could be read before the error)\n"),
               r.out);
    BOOST_TEST(contains(r.out, "  version: 3\n"), r.out);
    BOOST_TEST(contains(r.out, "  file size: " + std::to_string(key_end + 116) + "\n"), r.out);
    BOOST_TEST(contains(r.out, "  tensor count: 21\n"), r.out);
    const std::vector<std::string> keys = sample_keys();
    BOOST_TEST(contains(r.out, "  key-value count: " + std::to_string(keys.size()) + "\n"), r.out);
    const auto read = std::find(keys.begin(), keys.end(), tokens) - keys.begin();
    BOOST_TEST(contains(r.out, "metadata: " + std::to_string(read) + " keys read before the error"),
               r.out);
    for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(keys.size()); ++i)
        BOOST_TEST(contains(r.out, "\n  " + keys[static_cast<std::size_t>(i)] + " ") == (i < read),
                   keys[static_cast<std::size_t>(i)]);
    BOOST_TEST(contains(r.out, "tensors: 0 read before the error"), r.out);
    // --json and --kv stay as they were: the error alone.
    r = inspect_damaged(file, {"--json"});
    BOOST_TEST(nlohmann::json::parse(r.out)["ok"].get<bool>() == false);
    r = inspect_damaged(file, {"--kv", "general.name"});
    BOOST_TEST(r.out.empty(), r.out);
}

BOOST_AUTO_TEST_CASE(a_gguf_cut_in_its_tensor_data_shows_every_key_and_tensor_info) {
    cktest::TempDir dir;
    const auto file = cut_sample(dir, cktest::read_file(sample()).size() - 1000);
    auto r = inspect_damaged(file, {"--tensors"});
    BOOST_TEST(contains(r.err, "runs past the end of the file"), r.err);
    BOOST_TEST(contains(r.out, "  data start: 23296\n"), r.out);  // as test text_form reads it
    BOOST_TEST(contains(r.out, "metadata: " + std::to_string(sample_keys().size()) +
                                   " keys read before the error"),
               r.out);
    BOOST_TEST(contains(r.out, "tensors: 21 read before the error"), r.out);
    // The tensor whose data is cut was never placed: no offset.
    BOOST_TEST(contains(cktest::squeezed(r.out),
                        "  token_embd.weight  q4_K  [256, 1024]  262,144  "
                        "147456  23296\n"),
               r.out);
    BOOST_TEST(contains(r.out, "  -\n"), r.out);
}

BOOST_AUTO_TEST_CASE(ggml_truncated_files) {
    // ggml's own malformed files: whatever each one allows to be read, and the same error.
    std::size_t shown = 0;
    for (const auto& entry : std::filesystem::directory_iterator(cktest::test_data() / "bad")) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("trunc_")) continue;
        auto r = inspect_damaged(entry.path());
        if (r.out.empty()) continue;
        ++shown;
        BOOST_TEST(r.out.starts_with(entry.path().string() +
                                     ": gguf (damaged: what could be read before the error)\n"),
                   name << ": " << r.out);
    }
    BOOST_TEST(shown >= 8u);  // all but the empty file and those cut before the counts
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_inspect
