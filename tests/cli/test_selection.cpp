// Tensor selections (only=/skip=): real shell globs through the pipeline grammar, and a
// selection that matches nothing as a usage error naming the pattern and the closest names.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include "ck/error.hpp"
#include "ck/glob.hpp"
#include "ck/suggest.hpp"
#include "pipeline/pipeline_spec.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_selection {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

std::string option(const std::string& pipeline, std::size_t stage, const std::string& key) {
    return ckhost::parse_pipeline(pipeline).at(stage).options.at(key);
}

bool parse_fails(const std::string& text, const std::string& message) {
    try {
        ckhost::parse_pipeline(text);
    } catch (const ck::Error& e) {
        BOOST_TEST((e.kind() == ck::ErrorKind::usage));
        BOOST_TEST(contains(e.what(), message), e.what());
        return true;
    }
    return false;
}

// Each tensor's type in `file`, from the plan of a copy (`--dry-run`, nothing written): the
// line "  NAME: gguf TYPE SIZE -> gguf".
std::map<std::string, std::string> tensor_types(const fs::path& file) {
    cktest::TempDir scratch;
    auto r = cktest::run_ckhost({"--dry-run", "-q", "--pipeline", "gguf:gguf", "-i", file.string(),
                                 "-o", (scratch / "x.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::map<std::string, std::string> types;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        const auto colon = line.find(": gguf ");
        if (!line.starts_with("  ") || colon == std::string::npos) continue;
        std::istringstream rest(line.substr(colon + 7));
        std::string type;
        rest >> type;
        types[line.substr(2, colon - 2)] = type;
    }
    return types;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(selection)

BOOST_AUTO_TEST_CASE(globs_in_values_need_no_escapes) {
    // Brackets pair up inside a value, and a comma inside braces belongs to the glob.
    BOOST_TEST(option("gguf:dequant[only=blk.[01].attn_q*]:gguf", 1, "only") == "blk.[01].attn_q*");
    BOOST_TEST(option("gguf:dequant[only=blk.{0,1}.ffn_up.weight,to=f16]:gguf", 1, "only") ==
               "blk.{0,1}.ffn_up.weight");
    BOOST_TEST(option("gguf:dequant[only=blk.{0,1}.ffn_up.weight,to=f16]:gguf", 1, "to") == "f16");
    BOOST_TEST(option("gguf:repack[skip=blk.[!0].ffn_{up,down}*]:safetensors", 1, "skip") ==
               "blk.[!0].ffn_{up,down}*");
    BOOST_TEST(option("gguf:dequant[only=blk.[0-9].x,skip=a]:gguf", 1, "skip") == "a");
    // Nested groups, and a regular expression's quantifier with its comma.
    BOOST_TEST(option("a[k={x,{y,z}}]:b", 0, "k") == "{x,{y,z}}");
    BOOST_TEST(option(R"(gguf:meta[rename_tensors=^blk\.(\d{1,3})\.=L$1.]:gguf)", 1,
                      "rename_tensors") == R"(^blk\.(\d{1,3})\.=L$1.)");
    // The old escapes still work, and brackets and braces can be escaped too.
    BOOST_TEST(option(R"(a[k=x\,y\]z\\]:b)", 0, "k") == R"(x,y]z\)");
    BOOST_TEST(option(R"(a[k=str:a\[b\{c\}]:b)", 0, "k") == "str:a[b{c}");
    BOOST_TEST(option(R"(a[k=\d]:b)", 0, "k") == R"(\d)");
    // An escaped closer closes a group the value opened, so values written before groups
    // existed keep their meaning.
    BOOST_TEST(option(R"(a[k=str:x\, [y\] \\o/ a=b:c]:b)", 0, "k") == R"(str:x, [y] \o/ a=b:c)");
    BOOST_TEST(option(R"(a[k=str:{{ m['role'\] }}\, {% x %}]:b)", 0, "k") ==
               "str:{{ m['role'] }}, {% x %}");
}

BOOST_AUTO_TEST_CASE(unpaired_brackets_and_braces_are_usage_errors) {
    BOOST_TEST(parse_fails("gguf:dequant[only=blk.[01", "at character 23: '[' is not closed"));
    BOOST_TEST(parse_fails("gguf:dequant[only=blk.[01.x]:gguf", "is a '[' or '{' of the value"));
    BOOST_TEST(parse_fails("gguf:dequant[only=blk.{0,1.x]:gguf", "'{' is closed by ']'"));
    BOOST_TEST(parse_fails("gguf:dequant[only=blk.0}.x]:gguf", "'}' without a '{'"));
    BOOST_TEST(parse_fails("gguf:dequant[only=blk.{0,1}.x:gguf", "'[' without a closing ']'"));
}

BOOST_AUTO_TEST_CASE(glob_matches_like_a_shell) {
    const ck::Glob braces("blk.{0,1}.ffn_{up,down}.weight");
    BOOST_TEST(braces.alternatives().size() == 4u);
    BOOST_TEST(braces.matches("blk.1.ffn_down.weight"));
    BOOST_TEST(!braces.matches("blk.2.ffn_down.weight"));
    BOOST_TEST(!braces.matches("blk.0.ffn_gate.weight"));
    BOOST_TEST(ck::Glob("blk.[01].attn_q*").matches("blk.1.attn_q.weight"));
    BOOST_TEST(!ck::Glob("blk.[!01].attn_q*").matches("blk.1.attn_q.weight"));
    BOOST_TEST(ck::Glob("blk.?.attn_[kq].weight").matches("blk.7.attn_k.weight"));
    BOOST_TEST(ck::Glob("{x}").matches("{x}"));  // no comma: literal braces, as in bash
    BOOST_TEST(ck::Glob("a{b,{c,d}}e").alternatives() ==
               (std::vector<std::string>{"abe", "ace", "ade"}));
    BOOST_CHECK_THROW(ck::Glob("blk.{0,1"), ck::Error);
    // 2^13 alternatives is over the limit: refused, not expanded.
    std::string many;
    for (int i = 0; i < 13; ++i) many += "{a,b}";
    BOOST_CHECK_THROW(ck::Glob{many}, ck::Error);
}

BOOST_AUTO_TEST_CASE(closest_names_see_through_wildcards) {
    const std::vector<std::string> names = {"token_embd.weight", "blk.0.attn_q.weight",
                                            "blk.0.ffn_up.weight", "blk.1.ffn_up.weight",
                                            "output_norm.weight"};
    const ck::Glob typo("blk.*.fnn_*");
    BOOST_TEST(typo.distance("blk.0.ffn_up.weight") == 1u);
    BOOST_TEST(typo.distance("blk.0.attn_q.weight") > 1u);
    BOOST_TEST(ck::closest_matches(typo, names, 2) ==
               (std::vector<std::string>{"blk.0.ffn_up.weight", "blk.1.ffn_up.weight"}));
    BOOST_TEST(ck::closest_names("outptu_norm.weight", names).front() == "output_norm.weight");
}

BOOST_AUTO_TEST_CASE(a_selection_matching_nothing_is_a_usage_error) {
    struct Case {
        std::string pipeline, pattern;
    };
    for (const Case& c :
         {Case{"gguf:quantize[to=q8_0,only=blk.*.fnn_*]:gguf", "only=blk.*.fnn_*"},
          Case{"gguf:dequant[only=blk.*.fnn_*]:gguf", "only=blk.*.fnn_*"},
          Case{"gguf:repack[to=int8,only=blk.*.fnn_*]:safetensors", "only=blk.*.fnn_*"},
          Case{"gguf:dequant[skip=blk.*.fnn_*]:gguf", "skip=blk.*.fnn_*"},
          Case{"gguf:quantize[to=q8_0,only=blk.{0,1}.fnn_up.weight]:gguf",
               "only=blk.{0,1}.fnn_up.weight"}}) {
        cktest::TempDir out;
        auto r = cktest::run_ckhost(
            {"--pipeline", c.pipeline, "-i", sample(), "-o", (out / "o").string()});
        BOOST_TEST(r.exit_code == 2, c.pipeline << ": " << r.err);
        BOOST_TEST(contains(r.err, sample() + ": stage '"), r.err);
        BOOST_TEST(contains(r.err, c.pattern + " matches none of the 21 tensors"), r.err);
        BOOST_TEST(contains(r.err, "closest: 'blk.0.ffn_"), r.err);
        BOOST_TEST(out.entries().empty(), c.pipeline);
    }
    // Both patterns match, but together they leave nothing.
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:dequant[only=blk.0.*,skip=blk.*]:gguf", "-i",
                                 sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "only=blk.0.* and skip=blk.* together select none"), r.err);
    BOOST_TEST(out.entries().empty());
    // meta's del=GLOB takes the same globs and names the closest keys.
    r = cktest::run_ckhost({"--pipeline", "gguf:meta[del=general.{nmae,titel}]:gguf", "-i",
                            sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "closest: general.name"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(brackets_and_braces_select_the_tensors_they_name) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"-q", "--pipeline", "gguf:dequant[only=blk.[01].attn_{q,k}*]:gguf",
                                 "-i", sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto before = tensor_types(sample());
    const auto after = tensor_types(out / "o.gguf");
    BOOST_TEST_REQUIRE(after.size() == 21u);
    for (const auto& [name, type] : after) {
        const bool chosen = name == "blk.0.attn_q.weight" || name == "blk.1.attn_q.weight" ||
                            name == "blk.0.attn_k.weight" || name == "blk.1.attn_k.weight";
        BOOST_TEST(type == (chosen ? "f32" : before.at(name)), name);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_selection
