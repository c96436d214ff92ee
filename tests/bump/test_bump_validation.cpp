// Every validation of bump.md, each with a malformed model written by the project's own GGUF
// writer: exit 1, one line naming the tensor (or key) with expected versus actual values, and
// nothing left behind, not even the output directory.
#include <boost/test/unit_test.hpp>

#include <functional>

#include "bump_test_models.hpp"
#include "ck/ggml_types.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_bump_validation {

namespace fs = std::filesystem;
using cktest::contains;
using cktest::ModelBuilder;

namespace {

constexpr auto q4_k = static_cast<std::uint32_t>(ck::GgmlType::q4_k);
constexpr auto q6_k = static_cast<std::uint32_t>(ck::GgmlType::q6_k);
constexpr auto f16 = static_cast<std::uint32_t>(ck::GgmlType::f16);
constexpr auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
constexpr auto q8_0 = static_cast<std::uint32_t>(ck::GgmlType::q8_0);

ModelBuilder sample() {
    return ModelBuilder::from_gguf(cktest::examples_dir() / "micro-llama-q4_k_m.gguf");
}

// Converts `model` with `pipeline` and checks the refusal: exit 1, every fragment in the one
// error line, no output (the target directory did not exist and must not exist afterwards).
// Returns the suggested pipeline, "" when none was printed.
std::string expect_refusal(const ModelBuilder& model, const std::vector<std::string>& fragments,
                           const std::string& pipeline = "gguf:bump") {
    cktest::TempDir in, out;
    model.write(in / "model.gguf");
    auto r = cktest::run_ckhost({"--pipeline", pipeline, "-i", (in / "model.gguf").string(), "-o",
                                 (out / "bump").string() + "/"});
    BOOST_TEST(r.exit_code == 1, r.err);
    // One error line, and one suggested pipeline's when one plans (the first of the remedies
    // the error names that plans; quoted for the shell only when it needs quotes).
    const std::string prefix = "\nckhost: suggestion: --pipeline ";
    const auto at = r.err.find(prefix);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1 + (at != std::string::npos),
               r.err);
    for (const auto& f : fragments) BOOST_TEST(contains(r.err, f), "'" << f << "' in: " << r.err);
    BOOST_TEST(out.entries().empty(), "left behind: " << out.entries().size() << " entries");
    if (at == std::string::npos) return "";
    const auto from = at + prefix.size();
    return r.err.substr(from, r.err.find(" (it plans", from) - from);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bump_validation)

BOOST_AUTO_TEST_CASE(the_unchanged_sample_converts) {
    // The baseline every case below changes one thing of.
    cktest::TempDir in, out;
    sample().write(in / "model.gguf");
    auto r = cktest::run_ckhost({"--pipeline", "gguf:bump", "-i", (in / "model.gguf").string(),
                                 "-o", out.path().string() + "/", "--quiet"});
    BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(each_missing_tensor_kind_is_named) {
    for (std::string name :
         {"token_embd.weight", "output_norm.weight", "blk.1.attn_norm.weight",
          "blk.1.ffn_norm.weight", "blk.1.attn_q.weight", "blk.1.attn_k.weight",
          "blk.1.attn_v.weight", "blk.1.attn_output.weight", "blk.1.ffn_gate.weight",
          "blk.1.ffn_up.weight", "blk.1.ffn_down.weight"}) {
        BOOST_TEST_CONTEXT("without " << name) {
            ModelBuilder m = sample();
            m.remove_tensor(name);
            expect_refusal(m, {"tensor '" + name + "'", "missing"});
        }
    }
}

BOOST_AUTO_TEST_CASE(wrong_shapes_give_expected_and_actual) {
    struct Case {
        std::string name;
        std::uint32_t type;
        std::vector<std::int64_t> ne;
        std::string actual, expected;
    };
    const Case cases[] = {
        {"blk.0.attn_q.weight", q4_k, {256, 512}, "[256, 512]", "expected [256, 256]"},
        {"blk.0.attn_k.weight", q4_k, {256, 64}, "[256, 64]", "expected [256, 128]"},
        {"blk.1.attn_v.weight", q6_k, {256, 256}, "[256, 256]", "expected [256, 128]"},
        {"blk.0.attn_output.weight", q4_k, {256, 128}, "[256, 128]", "expected [256, 256]"},
        {"blk.0.ffn_gate.weight", q4_k, {256, 512}, "[256, 512]", "expected [256, 768]"},
        {"blk.1.ffn_up.weight", q4_k, {256, 1024}, "[256, 1024]", "expected [256, 768]"},
        {"blk.0.ffn_down.weight", q4_k, {256, 768}, "[256, 768]", "expected [768, 256]"},
        {"blk.0.attn_norm.weight", f32, {512}, "[512]", "expected [256]"},
        {"output_norm.weight", f32, {256, 2}, "[256, 2]", "expected [256]"},
        {"token_embd.weight", f32, {262144}, "[262144]", "expected 2 dimensions"},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.name << " as " << c.actual) {
            ModelBuilder m = sample();
            m.set_zeros(c.name, c.type, c.ne);
            expect_refusal(m, {"tensor '" + c.name + "'", c.actual, c.expected});
        }
    }
}

BOOST_AUTO_TEST_CASE(an_f16_weight_gets_the_remedies_in_stage_terms) {
    // F16 (and BF16): README.md's quantize stage, bump v4, or dequant, in stage terms only (the
    // plugin cannot know the pipeline: the host puts the first that plans into it).
    ModelBuilder m = sample();
    m.set_zeros("blk.0.attn_q.weight", f16, {256, 256});
    BOOST_TEST(expect_refusal(m, {"tensor 'blk.0.attn_q.weight'", "f16", "f32, q4_K or q6_K",
                                  "`quantize[mix=q4_k_m]`", "`bump[version=4]`",
                                  "`dequant[to=f32]`"}) == "'gguf:quantize[mix=q4_k_m]:bump'");
    // Other quantizations: dequant.
    ModelBuilder q = sample();
    q.set_zeros("token_embd.weight", q8_0, {256, 1024});
    BOOST_TEST(expect_refusal(q, {"tensor 'token_embd.weight'", "q8_0", "`dequant[to=f32]`"}) ==
               "'gguf:dequant[to=f32]:bump'");
    // No pipeline is written into the message itself: the one suggestion is the host's.
    cktest::TempDir in, out;
    q.write(in / "model.gguf");
    auto r = cktest::run_ckhost({"--pipeline", "gguf:bump", "-i", (in / "model.gguf").string(),
                                 "-o", (out / "b").string() + "/"});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(r.err.find("--pipeline") == r.err.rfind("--pipeline"), r.err);
}

BOOST_AUTO_TEST_CASE(gate_and_up_must_share_a_dtype) {
    ModelBuilder m = sample();
    m.set_zeros("blk.0.ffn_up.weight", q6_k, {256, 768});
    expect_refusal(m, {"tensor 'blk.0.ffn_up.weight'", "dtype q6_K", "expected q4_K",
                       "blk.0.ffn_gate.weight"});
}

BOOST_AUTO_TEST_CASE(k_quants_need_e_and_f_multiples_of_256) {
    // E = 320 (5 heads of 64): only ffn_down, whose rows are F = 512 long, can be a K-quant.
    cktest::LlamaShape shape;
    shape.embed = 320;
    shape.heads = 5;
    shape.kv_heads = 1;
    shape.ffn = 512;
    ModelBuilder e = ModelBuilder::llama_f32(shape);
    e.set_zeros("blk.0.ffn_down.weight", q4_k, {512, 320});
    BOOST_TEST(expect_refusal(e, {"tensor 'blk.0.ffn_down.weight'", "q4_K", "multiple of 256",
                                  "got 320"}) == "'gguf:dequant[to=f32]:bump'");

    // F = 320: gate and up (rows of E = 256) as Q4_K, ffn_down F32.
    shape = {};
    shape.ffn = 320;
    ModelBuilder f = ModelBuilder::llama_f32(shape);
    f.set_zeros("blk.0.ffn_gate.weight", q4_k, {256, 320});
    f.set_zeros("blk.0.ffn_up.weight", q4_k, {256, 320});
    BOOST_TEST(expect_refusal(f, {"tensor 'blk.0.ffn_gate.weight'", "multiple of 256",
                                  "got 320"}) == "'gguf:dequant[to=f32]:bump'");

    // Without K-quants the same shapes are fine.
    cktest::TempDir in, out;
    ModelBuilder::llama_f32(shape).write(in / "f32.gguf");
    auto r = cktest::run_ckhost({"--pipeline", "gguf:bump", "-i", (in / "f32.gguf").string(), "-o",
                                 out.path().string() + "/", "--quiet"});
    BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(heads_must_divide_evenly) {
    ModelBuilder kv = sample();
    kv.metadata().set("llama.attention.head_count_kv", ck::Value::of_u32(3));
    expect_refusal(
        kv, {"tensor 'blk.0.attn_k.weight'", "head_count 4", "head_count_kv 3", "H % Hkv == 0"});

    ModelBuilder heads = sample();
    heads.metadata().set("llama.attention.head_count", ck::Value::of_u32(5));
    expect_refusal(heads, {"tensor 'blk.0.attn_q.weight'", "embedding_length 256", "head_count 5",
                           "E % H == 0"});
}

BOOST_AUTO_TEST_CASE(embedding_length_must_match_token_embd) {
    ModelBuilder m = sample();
    m.metadata().set("llama.embedding_length", ck::Value::of_u32(512));
    expect_refusal(m, {"tensor 'token_embd.weight'", "ne0 is 256", "expected 512"});
}

BOOST_AUTO_TEST_CASE(required_keys_are_named) {
    ModelBuilder heads = sample();
    heads.metadata().erase("llama.attention.head_count");
    expect_refusal(heads, {"key 'llama.attention.head_count'", "missing"});

    ModelBuilder context = sample();
    context.metadata().erase("llama.context_length");
    expect_refusal(context, {"key 'llama.context_length'", "missing", "bump[context=N]"});
    // ... which the writer option supplies.
    cktest::TempDir in, out;
    context.write(in / "model.gguf");
    auto r = cktest::run_ckhost({"--pipeline", "gguf:bump[context=512]", "-i",
                                 (in / "model.gguf").string(), "-o", out.path().string() + "/",
                                 "--quiet"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(
        out / "weights.bump",
        cktest::test_data() / "golden" / "micro-llama-q4_k_m" / "weights.bump"));
}

BOOST_AUTO_TEST_CASE(fallbacks_for_optional_keys) {
    // block_count and feed_forward_length have fallbacks (bump.md): without them
    // the sample still gives the reference bytes.
    ModelBuilder m = sample();
    m.metadata().erase("llama.block_count");
    m.metadata().erase("llama.feed_forward_length");
    cktest::TempDir in, out;
    m.write(in / "model.gguf");
    auto r = cktest::run_ckhost({"--pipeline", "gguf:bump", "-i", (in / "model.gguf").string(),
                                 "-o", out.path().string() + "/", "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(
        out / "weights.bump",
        cktest::test_data() / "golden" / "micro-llama-q4_k_m" / "weights.bump"));
}

BOOST_AUTO_TEST_CASE(bad_writer_options_are_usage_errors) {
    cktest::TempDir out;
    std::string in = (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
    for (std::string stage :
         {"bump[context=0]", "bump[context=x]", "bump[strict=maybe]", "bump[contxt=5]"}) {
        auto r = cktest::run_ckhost(
            {"--pipeline", "gguf:" + stage, "-i", in, "-o", out.path().string() + "/"});
        BOOST_TEST(r.exit_code == 2, stage << ": " << r.err);
    }
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_bump_validation
