// Which reader an input needs (issue 28, "format detection"), through the real binary and the
// readers' own probe functions: a reader that cannot open its input says which reader can (and
// suggests that pipeline when it plans), `inspect` takes a checkpoint folder, a safetensors file
// of a Hugging Face checkpoint converted alone is warned about, and PyTorch pickles are refused
// saying why.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_format_detection {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using nlohmann::json;

namespace {

// ../shared/testdata/hf-arch/mistral-nemo-bf16: a real checkpoint (config.json,
// model.safetensors, tokenizer) of an architecture the hf reader converts.
std::optional<fs::path> checkpoint() {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_regular_file(*shared / "hf-arch" / "mistral-nemo-bf16" / "config.json"))
        return std::nullopt;
    return *shared / "hf-arch" / "mistral-nemo-bf16";
}

struct CheckpointPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(checkpoint().has_value());
        ok.message()
            << "../shared/testdata/hf-arch/mistral-nemo-bf16 is absent: skipping the tests "
               "that plan and inspect a real checkpoint";
        return ok;
    }
};

// A folder laid out as a checkpoint (a config.json beside model.safetensors, which ckhost writes
// from the sample model): what the hf reader's probe recognises, though its config.json names no
// architecture, so that hf:gguf does not plan on it.
fs::path checkpoint_shaped(const cktest::TempDir& dir) {
    const fs::path folder = dir / "shaped";
    fs::create_directory(folder);
    std::ofstream(folder / "config.json") << "{}\n";
    const auto r = cktest::run_ckhost({"--pipeline", "gguf:dequant:safetensors", "-i",
                                       cktest::sample_model().string(), "-o",
                                       (folder / "model.safetensors").string(), "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return folder;
}

std::vector<std::string> names_in(const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(format_detection)

BOOST_AUTO_TEST_CASE(a_reader_that_cannot_open_the_input_names_the_one_that_can) {
    cktest::TempDir dir;
    const fs::path folder = checkpoint_shaped(dir);
    const auto before = names_in(dir.path());
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", folder.string() + "/", "-o",
                                 (dir / "x.gguf").string(), "--json"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err,
                        "it is a Hugging Face checkpoint folder, which the reader 'hf' "
                        "reads: use hf: instead of gguf:"),
               r.err);
    // hf:gguf does not plan on this config.json: no suggestion that would fail the same way.
    BOOST_TEST(json::parse(r.out)["error"]["suggestion"].is_null(), r.out);
    BOOST_TEST((names_in(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(the_reader_that_can_is_suggested_when_it_plans,
                     *utf::precondition(CheckpointPresent())) {
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", checkpoint()->string(), "-o",
                                 (dir / "x.gguf").string(), "--json"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "use hf: instead of gguf:"), r.err);
    BOOST_TEST(contains(r.err, "ckhost: suggestion: --pipeline hf:gguf"), r.err);
    BOOST_TEST(json::parse(r.out)["error"]["suggestion"] == "hf:gguf", r.out);
    BOOST_TEST(dir.entries().empty());
    // ... and it works.
    r = cktest::run_ckhost(
        {"--pipeline", "hf:gguf", "-i", checkpoint()->string(), "-o", (dir / "x.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(inspect_takes_a_checkpoint_folder, *utf::precondition(CheckpointPresent())) {
    for (const std::string& given : {checkpoint()->string(), checkpoint()->string() + "/"}) {
        auto r = cktest::run_ckhost({"inspect", given, "--json"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const json doc = json::parse(r.out);
        BOOST_TEST(doc["format"] == "hf", r.out);
        BOOST_TEST(doc["tensor_count"].get<int>() > 0, r.out);
    }
    // Its config.json still names it too.
    auto r = cktest::run_ckhost({"inspect", (*checkpoint() / "config.json").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(a_safetensors_file_of_a_checkpoint_read_alone_is_warned_about) {
    cktest::TempDir dir;
    const fs::path folder = checkpoint_shaped(dir);
    auto r = cktest::run_ckhost({"--pipeline", "safetensors:gguf", "-i",
                                 (folder / "model.safetensors").string(), "-o",
                                 (dir / "y.gguf").string(), "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string warning = "is one file of a Hugging Face checkpoint folder (" +
                                folder.string() + "/, which the reader 'hf' reads whole)";
    BOOST_TEST(contains(r.err, warning), r.err);
    BOOST_TEST(contains(r.err,
                        "so llama.cpp cannot load the result; convert the checkpoint "
                        "with --pipeline 'hf:gguf' -i " +
                            folder.string() + "/"),
               r.err);
    const json doc = json::parse(r.out);
    BOOST_TEST(contains(doc["warnings"].dump(), "llama.cpp cannot load the result"), r.out);
    // A safetensors file on its own is what the safetensors reader is for: no warning.
    fs::create_directory(dir / "alone");
    fs::rename(folder / "model.safetensors", dir / "alone" / "model.safetensors");
    r = cktest::run_ckhost({"--pipeline", "safetensors:gguf", "-i",
                            (dir / "alone" / "model.safetensors").string(), "-o",
                            (dir / "z.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(!contains(r.err, "checkpoint"), r.err);
}

BOOST_AUTO_TEST_CASE(pytorch_pickles_are_refused_saying_why) {
    cktest::TempDir dir;
    const fs::path folder = dir / "pt";
    fs::create_directory(folder);
    std::ofstream(folder / "config.json") << R"({"architectures": ["LlamaForCausalLM"]})"
                                          << "\n";
    // What torch.save writes starts as a zip archive; ckhost must not care what is inside.
    std::ofstream(folder / "pytorch_model.bin") << "PK\x03\x04 not really a pickle\n";
    const auto before = names_in(dir.path());
    const std::string why =
        "it holds PyTorch pickles (pytorch_model.bin) and no safetensors: "
        "ckhost does not read pickles, because loading one runs whatever "
        "code the file names";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--pipeline", "hf:gguf", "-i", folder.string(), "-o",
                                   (dir / "x.gguf").string()},
          {"--pipeline", "gguf:gguf", "-i", folder.string(), "-o", (dir / "x.gguf").string()},
          {"inspect", folder.string()},
          {"inspect", (folder / "config.json").string()}}) {
        BOOST_TEST_CONTEXT(args[0] << " " << args[1]) {
            const auto r = cktest::run_ckhost(args);
            BOOST_TEST(r.exit_code == 1, r.err);
            BOOST_TEST(contains(r.err, why), r.err);
            BOOST_TEST(contains(r.err, "convert the checkpoint to safetensors first"), r.err);
            BOOST_TEST((names_in(dir.path()) == before));
        }
    }
    // Without config.json, and the pickle file itself.
    fs::remove(folder / "config.json");
    for (const fs::path& input : {folder, folder / "pytorch_model.bin"}) {
        const auto r = cktest::run_ckhost({"inspect", input.string()});
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, "PyTorch pickle"), r.err);
        BOOST_TEST(contains(r.err, "runs whatever code the file names"), r.err);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_format_detection
