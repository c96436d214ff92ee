// Messages a new user met raw or wrong (issue 28, item 11), through the real binary: `help
// --json` is a help document, `plugins STAGE` points to `help STAGE`, a library that is no plugin
// is explained in the dynamic loader's words, an output that would replace a file of the input
// is refused before anything is written naming both, and an output that cannot be written is
// "kind": "output" in --json (exit 1 as before).
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_host_messages {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using nlohmann::json;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

// ../shared/testdata/hf/llama-bf16, a Hugging Face checkpoint llama.cpp's converter reads.
std::optional<fs::path> checkpoint() {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_regular_file(*shared / "hf" / "llama-bf16" / "config.json"))
        return std::nullopt;
    return *shared / "hf" / "llama-bf16";
}

struct CheckpointPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(checkpoint().has_value());
        ok.message() << "../shared/testdata/hf/llama-bf16 is absent: skipping the test that "
                        "writes into a checkpoint folder";
        return ok;
    }
};

// A writable copy of the checkpoint in `dir`/ck.
fs::path copy_checkpoint(const cktest::TempDir& dir) {
    const fs::path copy = dir / "ck";
    fs::copy(*checkpoint(), copy);
    for (const auto& entry : fs::directory_iterator(copy))
        fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
    fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
    return copy;
}

// Every file of `folder` with its bytes, to compare before and after.
std::map<std::string, std::vector<unsigned char>> contents(const fs::path& folder) {
    std::map<std::string, std::vector<unsigned char>> files;
    for (const auto& entry : fs::directory_iterator(folder))
        files[entry.path().filename().string()] = cktest::read_file(entry.path());
    return files;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(host_messages)

BOOST_AUTO_TEST_CASE(help_with_json_is_a_help_document) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"help", "--json"}, {"--json", "help"}}) {
        const auto r = cktest::run_ckhost(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const json doc = json::parse(r.out);
        BOOST_TEST(doc["command"] == "help", r.out);
        BOOST_TEST(doc["ok"] == true);
        std::vector<std::string> names;
        for (const json& c : doc["commands"]) names.push_back(c["name"].get<std::string>());
        for (const char* command : {"convert", "inspect", "batch", "help"})
            BOOST_TEST((std::find(names.begin(), names.end(), command) != names.end()), command);
        BOOST_TEST(!contains(r.err, "unknown command"), r.err);
    }
    // Without --json, the text, as before.
    const auto text = cktest::run_ckhost({"help"});
    BOOST_TEST(text.exit_code == 0);
    BOOST_TEST(contains(text.out, "usage: ckhost --pipeline"), text.out);
}

BOOST_AUTO_TEST_CASE(a_stage_given_to_plugins_points_to_its_help) {
    auto r = cktest::run_ckhost({"plugins", "quantize"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "for one stage's options and examples: ckhost help quantize"),
               r.err);
    BOOST_TEST(!contains(r.err, "positional"), r.err);
    r = cktest::run_ckhost({"plugins", "quantise", "--json"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "ckhost help STAGE; did you mean 'quantize'?"), r.err);
    BOOST_TEST(json::parse(r.out)["command"] == "plugins", r.out);
}

BOOST_AUTO_TEST_CASE(a_library_that_is_no_plugin_is_explained_in_the_loaders_words) {
    cktest::TempDir dir;
    fs::create_directory(dir / "plugins");
    std::ofstream(dir / "plugins" / "junk.so") << "junk\n";
    auto r = cktest::run_ckhost({"--plugin-dir", (dir / "plugins").string(), "--pipeline",
                                 "junk:gguf", "-i", sample(), "-o", (dir / "x.gguf").string()});
    BOOST_TEST(r.exit_code == 3, r.err);
    BOOST_TEST(contains(r.err,
                        "plugin 'junk' cannot be loaded: it is not a loadable plugin "
                        "library (the dynamic loader says: file too short)"),
               r.err);
    BOOST_TEST(!contains(r.err, "Bad file descriptor"), r.err);
    BOOST_TEST(!fs::exists(dir / "x.gguf"));
    r = cktest::run_ckhost({"--plugin-dir", (dir / "plugins").string(), "plugins"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "junk  SKIPPED: cannot be loaded: it is not a loadable plugin"),
               r.out);
}

// bump writes config.json beside its weights: into the checkpoint folder it would replace the
// checkpoint's own config.json with bump's (with --force it did, exit 0, from the folder's
// config.json; from the folder it failed as "the file changed while being read").
BOOST_AUTO_TEST_CASE(an_output_that_would_replace_a_file_of_the_input_is_refused_first,
                     *utf::precondition(CheckpointPresent())) {
    cktest::TempDir dir;
    const fs::path ck = copy_checkpoint(dir);
    const auto before = contents(ck);
    const std::string pipeline = "hf:headpack:quantize[mix=q4_k_m]:bump";
    for (const std::string& input : {ck.string(), (ck / "config.json").string()})
        for (const char* force : {"--force", "--dry-run"}) {
            BOOST_TEST_CONTEXT(input << " " << force) {
                auto r = cktest::run_ckhost({"--pipeline", pipeline, "-i", input, "-o",
                                             ck.string() + "/", force, "--json"});
                BOOST_TEST(r.exit_code == (std::string(force) == "--force" ? 1 : 0), r.err);
                const std::string said = ck.string() +
                                         "/config.json: the writer 'bump' would "
                                         "replace " +
                                         (ck / "config.json").string() +
                                         ", a file the conversion reads";
                BOOST_TEST(contains(r.err, said), r.err);
                BOOST_TEST(!contains(r.err, "changed while being read"), r.err);
                if (std::string(force) == "--force") {
                    const json doc = json::parse(r.out);
                    BOOST_TEST(doc["error"]["kind"] == "output", r.out);
                    BOOST_TEST(doc["error"]["file"] == ck.string() + "/config.json", r.out);
                }
                BOOST_TEST((contents(ck) == before));  // nothing written, no temporary left
            }
        }
    // A new file in the checkpoint's folder replaces nothing of it: written.
    auto r = cktest::run_ckhost(
        {"--pipeline", "hf:gguf", "-i", ck.string(), "-o", (ck / "model.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_regular_file(ck / "model.gguf"));
    // ... nor does that file the next time: the reader does not read it.
    r = cktest::run_ckhost({"--pipeline", "hf:gguf", "-i", ck.string(), "-o",
                            (ck / "model.gguf").string(), "--force"});
    BOOST_TEST(r.exit_code == 0, r.err);
    // A tensor file the reader maps is one it reads, whatever the input path names.
    r = cktest::run_ckhost({"--pipeline", "hf:safetensors", "-i", (ck / "config.json").string(),
                            "-o", (ck / "model.safetensors").string(), "--force"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "would replace " + (ck / "model.safetensors").string()), r.err);
    // The same format over its own file is an edit in place, as before.
    const fs::path copy = dir / "m.gguf";
    fs::copy_file(sample(), copy);
    r = cktest::run_ckhost({"--pipeline", "gguf:meta[set=general.name=str:x]:gguf", "-i",
                            copy.string(), "-o", copy.string(), "--force"});
    BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(output_side_failures_are_of_kind_output) {
    cktest::TempDir dir;
    const std::string out = (dir / "copy.gguf").string();
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample(), "-o", out});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto before = cktest::read_file(out);
    // An existing output, and an output whose folder is a file.
    std::ofstream(dir / "afile") << "a file, not a folder\n";
    for (const std::string& target : {out, (dir / "afile" / "x.gguf").string()}) {
        r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample(), "-o", target, "--json"});
        BOOST_TEST(r.exit_code == 1, r.err);
        const json doc = json::parse(r.out);
        BOOST_TEST(doc["error"]["kind"] == "output", r.out);
        BOOST_TEST(doc["error"]["exit_code"] == 1, r.out);
    }
    BOOST_TEST((cktest::read_file(out) == before));
    // An input that cannot be read is still "input".
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", (dir / "missing.gguf").string(), "-o",
                            (dir / "y.gguf").string(), "--json"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(json::parse(r.out)["error"]["kind"] == "input", r.out);
    BOOST_TEST(!fs::exists(dir / "y.gguf"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_host_messages
