// The pipeline grammar and the usage errors around it: parser unit tests, then the real
// binary's exit codes and messages.
#include <boost/test/unit_test.hpp>

#include "ck/error.hpp"
#include "pipeline/pipeline_spec.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_pipeline_grammar {

using cktest::contains;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

// Runs a conversion of the sample with `pipeline`, test plugins on the search path.
cktest::RunResult convert(const std::string& pipeline, const cktest::TempDir& out) {
    return cktest::run_ckhost({"--plugin-dir", cktest::test_plugin_dir().string(), "--pipeline",
                               pipeline, "-i", sample(), "-o", (out / "o.gguf").string()});
}

bool usage_error(const std::string& text) {
    try {
        ckhost::parse_pipeline(text);
    } catch (const ck::Error& e) {
        return e.kind() == ck::ErrorKind::usage;
    }
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pipeline_grammar)

BOOST_AUTO_TEST_CASE(parses_stages_and_options) {
    auto stages =
        ckhost::parse_pipeline("gguf:repack[to=nf4,only=blk.*.ffn_*]:bump[context=4096,strict]");
    BOOST_TEST_REQUIRE(stages.size() == 3u);
    BOOST_TEST(stages[0].name == "gguf");
    BOOST_TEST(stages[0].options.empty());
    BOOST_TEST(stages[1].name == "repack");
    BOOST_TEST(stages[1].options.at("to") == "nf4");
    BOOST_TEST(stages[1].options.at("only") == "blk.*.ffn_*");
    BOOST_TEST(stages[2].options.at("context") == "4096");
    BOOST_TEST(stages[2].options.at("strict") == "");
    BOOST_TEST(stages[2].text == "bump[context=4096,strict]");
}

BOOST_AUTO_TEST_CASE(syntax_errors) {
    for (const char* bad :
         {"", ":gguf", "gguf:", "gguf::gguf", "gguf[to=1:gguf", "gguf[=1]:gguf",
          "gguf[a=1,a=2]:gguf", "gguf[a=1,,b=2]:gguf", "gguf[a=1]x:gguf", "gg uf:gguf"})
        BOOST_TEST(usage_error(bad), "'" << bad << "' should be a usage error");
}

BOOST_AUTO_TEST_CASE(backslash_escapes_in_values) {
    // `\,` `\]` `\\` are a literal comma, bracket and backslash; any other backslash stays.
    auto stages = ckhost::parse_pipeline(
        R"(gguf:meta[set=general.name=str:a\,b\]c\\d,del=x]:meta[rename_tensors=^blk\.(\d+)=L$1]:)"
        R"(gguf)");
    BOOST_TEST_REQUIRE(stages.size() == 4u);
    BOOST_TEST(stages[1].options.size() == 2u);
    BOOST_TEST(stages[1].options.at("set") == R"(general.name=str:a,b]c\d)");
    BOOST_TEST(stages[1].options.at("del") == "x");
    BOOST_TEST(stages[1].text == R"(meta[set=general.name=str:a\,b\]c\\d,del=x])");
    BOOST_TEST(stages[2].options.at("rename_tensors") == R"(^blk\.(\d+)=L$1)");
    // An escaped ']' does not close the brackets; `\\` before ']' is a backslash, then the end.
    BOOST_TEST(ckhost::parse_pipeline(R"(a[k=\\]:b)")[0].options.at("k") == "\\");
    BOOST_TEST(ckhost::parse_pipeline(R"(a[k=x\]y]:b)")[0].options.at("k") == "x]y");
    BOOST_TEST(ckhost::parse_pipeline(R"(a[k=\q]:b)")[0].options.at("k") == R"(\q)");
    // An escaped comma does not end the value: one option, not two.
    BOOST_TEST(ckhost::parse_pipeline(R"(a[k=1\,j=2]:b)")[0].options.size() == 1u);
    // The same option twice is still refused; a stage of its own repeats an edit.
    BOOST_TEST(usage_error("a[k=1,k=2]:b"));
    BOOST_TEST(ckhost::parse_pipeline("a:m[k=1]:m[k=2]:b").size() == 4u);
    for (const char* bad : {R"(a[k=x\]:b)", R"(a[k=\)", R"(a[\,k=1,]:b)", R"(a[,]:b)", "a[k=1,]:b"})
        BOOST_TEST(usage_error(bad), "'" << bad << "' should be a usage error");
}

BOOST_AUTO_TEST_CASE(unknown_stage_suggests) {
    cktest::TempDir out;
    auto r = convert("ggfu:gguf", out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "unknown stage 'ggfu'"), r.err);
    BOOST_TEST(contains(r.err, "did you mean 'gguf'"), r.err);
    BOOST_TEST(contains(r.err, "available:"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(wrong_kind_at_a_position) {
    cktest::TempDir out;
    auto r = convert("testkit:gguf", out);  // a transform first
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "not a reader"), r.err);
    BOOST_TEST(contains(r.err, "readers: "), r.err);
    BOOST_TEST(contains(r.err, "gguf"), r.err);
    r = convert("gguf:testkit", out);  // a transform last
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "not a writer"), r.err);
    r = convert("gguf:gguf:gguf", out);  // a reader/writer in the middle
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "not a transform"), r.err);
    r = convert("gguf", out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "at least a reader and a writer"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(unknown_option_and_bad_values) {
    cktest::TempDir out;
    auto r = convert("gguf:testkit[fail_att=3]:gguf", out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "unknown option 'fail_att'"), r.err);
    BOOST_TEST(contains(r.err, "did you mean 'fail_at'"), r.err);
    r = convert("gguf[foo=1]:gguf", out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "options: none"), r.err);
    r = convert("gguf:testkit[fail_with=boom]:gguf", out);  // outside the declared choices
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "choices: std|ck|int"), r.err);
    r = convert("gguf:testkit[sleep_ms=soon]:gguf", out);  // rejected by the plugin's own parsing
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "sleep_ms=soon"), r.err);
    BOOST_TEST(out.entries().empty());
}

// A comma meant as part of a value splits it into an unknown option: the message says how to
// keep the comma, and only for a bare word after a comma (not for a mistyped option=value).
BOOST_AUTO_TEST_CASE(a_comma_inside_a_value_gets_a_hint) {
    cktest::TempDir out;
    auto r = convert("gguf:meta[set=general.name=str:Llama 3, tuned]:gguf", out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "unknown option ' tuned'"), r.err);
    BOOST_TEST(contains(r.err,
                        "if ', tuned' belongs to the value before it, write its comma as "
                        "'\\,'"),
               r.err);
    r = convert("gguf:quantize[only=blk.0.*,blk.1.*]:gguf", out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "if ',blk.1.*' belongs to the value before it"), r.err);
    r = convert("gguf:testkit[fail_att=3]:gguf", out);
    BOOST_TEST(!contains(r.err, "belongs to the value"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(command_line_usage_errors) {
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample()});
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "missing output"), r.err);
    r = cktest::run_ckhost({"inspekt", sample()});
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "did you mean 'inspect'"), r.err);
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "--bogus"});
    BOOST_TEST(r.exit_code == 2);
    r = cktest::run_ckhost({"plugins", "--isa", "sse9"});
    BOOST_TEST(r.exit_code == 2);
    r = cktest::run_ckhost({});
    BOOST_TEST(r.exit_code == 2);
    r = cktest::run_ckhost({"--help"});
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(contains(r.out, "--pipeline"));
}

BOOST_AUTO_TEST_CASE(positional_form_equals_flag_form) {
    cktest::TempDir out;
    auto a = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "a.gguf").string()});
    auto b = cktest::run_ckhost(
        {"convert", "--pipeline", "gguf:gguf", sample(), (out / "b.gguf").string()});
    BOOST_TEST_REQUIRE(a.exit_code == 0, a.err);
    BOOST_TEST_REQUIRE(b.exit_code == 0, b.err);
    BOOST_TEST(cktest::files_equal(out / "a.gguf", out / "b.gguf"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_pipeline_grammar
