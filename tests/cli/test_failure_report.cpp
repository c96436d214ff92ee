// A failing conversion tells the whole story: the warnings given before the error, the error
// with the file it is about, and a pipeline that plans where this one failed.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "pipeline/conversion_error.hpp"
#include "pipeline/pipeline.hpp"
#include "registry/plugin_registry.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_failure_report {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(failure_report)

BOOST_AUTO_TEST_CASE(warnings_error_with_file_and_a_suggested_pipeline) {
    cktest::TempDir out;
    const std::string target = (out / "m.safetensors").string();
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:repack[to=nf4]:safetensors", "-i", sample(), "-o", target});
    BOOST_TEST(r.exit_code == 1, r.err);
    // repack's warning (what it left alone, and why) comes first, then the writer's refusal
    // naming the input file, then the pipeline that works.
    const auto warning = r.err.find("warning: repack");
    const auto error = r.err.find("ckhost: error: " + sample() + ": tensor '");
    const auto suggestion =
        r.err.find("ckhost: suggestion: --pipeline 'gguf:dequant:repack[to=nf4]:safetensors'");
    BOOST_TEST(warning != std::string::npos, r.err);
    BOOST_TEST(error != std::string::npos, r.err);
    BOOST_TEST(suggestion != std::string::npos, r.err);
    BOOST_TEST((warning < error && error < suggestion), r.err);
    BOOST_TEST(contains(r.err, "has no safetensors dtype"), r.err);
    BOOST_TEST(out.entries().empty());

    // The suggestion works.
    r = cktest::run_ckhost({"-q", "--pipeline", "gguf:dequant:repack[to=nf4]:safetensors", "-i",
                            sample(), "-o", target});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_regular_file(target));

    // --quiet keeps the error and the suggestion, not the warnings.
    r = cktest::run_ckhost({"-q", "--pipeline", "gguf:repack[to=nf4]:safetensors", "-i", sample(),
                            "-o", (out / "other.safetensors").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(!contains(r.err, "warning:"), r.err);
    BOOST_TEST(contains(r.err, "ckhost: suggestion: "), r.err);
    BOOST_TEST(!fs::exists(out / "other.safetensors"));
}

BOOST_AUTO_TEST_CASE(no_suggestion_when_none_plans) {
    cktest::TempDir out;
    // An existing output is not a pipeline problem: no suggestion.
    auto r = cktest::run_ckhost(
        {"-q", "--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(!contains(r.err, "suggestion"), r.err);
    // Neither when dequant does not help: bump refuses a repacked model whatever its types.
    r = cktest::run_ckhost({"--pipeline", "gguf:repack[to=int8]:bump", "-i", sample(), "-o",
                            (out / "b").string() + "/"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "ckhost.repack"), r.err);
    BOOST_TEST(!contains(r.err, "suggestion"), r.err);
    BOOST_TEST(out.entries() == std::vector<std::string>{"o.gguf"});  // nothing under b/
}

// The same facts as fields of the error, in process: what the JSON report carries.
BOOST_AUTO_TEST_CASE(the_error_carries_the_warnings_and_the_suggestion_as_fields) {
    const std::string pipeline = "gguf:repack[to=nf4]:safetensors";
    ckhost::PluginRegistry registry(
        {cktest::ckhost_binary().parent_path().parent_path() / "lib" / "ckhost" / "plugins"});
    ckhost::Pipeline p(registry, pipeline);
    cktest::TempDir out;
    ckhost::ConvertSettings settings;
    static_cast<ckhost::Conversion&>(settings) = {pipeline, sample(), out / "m.safetensors"};
    try {
        p.run(settings);
        BOOST_FAIL("the conversion succeeded");
    } catch (const ckhost::ConversionError& e) {
        BOOST_TEST((e.kind() == ck::ErrorKind::input));
        BOOST_TEST(e.file() == sample());
        BOOST_TEST(e.subject() == "tensor 'token_embd.weight'");
        BOOST_TEST_REQUIRE(e.warnings().size() == 2u);
        BOOST_TEST(contains(e.warnings()[0], "repack: 13 tensors stay as they are"),
                   e.warnings()[0]);
        BOOST_TEST(e.suggestion() == "gguf:dequant:repack[to=nf4]:safetensors");
    }
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_failure_report
