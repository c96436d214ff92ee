// The six places where the bump writer deliberately differs from the reference converter
// (bump.md), each tested: (1) rms_norm_eps from llama.cpp's key, (2) <arch>.* keys and qwen2
// biases, (3) BF16 norms as ggml type 30, (4) nothing left behind on failure, (5) an untied
// output.weight warned about / refused with strict=1, (6) context=N.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "bump_test_models.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/little_endian.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_bump_differences {

namespace fs = std::filesystem;
using cktest::contains;
using cktest::ModelBuilder;

namespace {

constexpr auto f16 = static_cast<std::uint32_t>(ck::GgmlType::f16);
constexpr auto bf16 = static_cast<std::uint32_t>(ck::GgmlType::bf16);
constexpr auto q4_k = static_cast<std::uint32_t>(ck::GgmlType::q4_k);

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

fs::path golden_q4() {
    return cktest::test_data() / "golden" / "micro-llama-q4_k_m";
}

cktest::RunResult convert(const ModelBuilder& model, const cktest::TempDir& in, const fs::path& out,
                          const std::string& pipeline = "gguf:bump",
                          std::vector<std::string> extra = {}) {
    model.write(in / "model.gguf");
    std::vector<std::string> args = {
        "--pipeline", pipeline, "-i", (in / "model.gguf").string(), "-o", out.string() + "/"};
    args.insert(args.end(), extra.begin(), extra.end());
    return cktest::run_ckhost(args);
}

std::string config_line(const fs::path& config, const std::string& key) {
    std::string text = cktest::read_text(config);
    std::size_t at = text.find("\"" + key + "\": ");
    if (at == std::string::npos) return {};
    return text.substr(at, text.find('\n', at) - at);
}

std::vector<std::byte> as_bytes(const std::vector<float>& values) {
    std::vector<std::byte> out(values.size() * 4);
    ck::le::store_array(out.data(), values.data(), values.size());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bump_deliberate_differences)

BOOST_AUTO_TEST_CASE(difference_1_rms_norm_eps_from_llama_cpp_key) {
    cktest::TempDir in, out;
    ModelBuilder m = ModelBuilder::llama_f32({});
    m.metadata().set("llama.rope.freq_base", ck::Value::of_f32(500000.0f));
    BOOST_TEST_REQUIRE(convert(m, in, out.path()).exit_code == 0);
    // The f32 9.99999997e-07 prints as the shortest decimal that reads back to it.
    BOOST_TEST(config_line(out / "config.json", "rms_norm_eps") == "\"rms_norm_eps\": 1e-06,");
    BOOST_TEST(config_line(out / "config.json", "rope_theta") == "\"rope_theta\": 500000.0");

    // The legacy key, then the default.
    m.metadata().erase("llama.attention.layer_norm_rms_epsilon");
    m.metadata().set("llama.norm_rms_eps", ck::Value::of_f32(2e-5f));
    cktest::TempDir legacy;
    BOOST_TEST_REQUIRE(convert(m, in, legacy.path()).exit_code == 0);
    BOOST_TEST(config_line(legacy / "config.json", "rms_norm_eps") == "\"rms_norm_eps\": 2e-05,");
    m.metadata().erase("llama.norm_rms_eps");
    m.metadata().erase("llama.rope.freq_base");
    cktest::TempDir fallback;
    BOOST_TEST_REQUIRE(convert(m, in, fallback.path()).exit_code == 0);
    BOOST_TEST(config_line(fallback / "config.json", "rms_norm_eps") == "\"rms_norm_eps\": 1e-05,");
    BOOST_TEST(config_line(fallback / "config.json", "rope_theta") == "\"rope_theta\": 10000.0");
}

BOOST_AUTO_TEST_CASE(difference_2_qwen2_keys_biases_and_tied_embeddings) {
    cktest::LlamaShape shape;
    shape.arch = "qwen2";
    shape.qkv_biases = true;
    shape.output_weight = false;  // tied, as Qwen2's small models are
    ModelBuilder m = ModelBuilder::llama_f32(shape);
    cktest::TempDir in, out;
    auto r = convert(m, in, out.path());
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    // Nothing dropped, nothing to warn about: only the note on the position embeddings.
    BOOST_TEST(!contains(r.err, "warning"), r.err);
    BOOST_TEST(contains(r.err, "bump: position embeddings: context 128 x 256"), r.err);

    BOOST_TEST(config_line(out / "config.json", "model_type") == "\"model_type\": \"qwen2\",");
    BOOST_TEST(config_line(out / "config.json", "hidden_size") == "\"hidden_size\": 256,");
    BOOST_TEST(config_line(out / "config.json", "num_key_value_heads") ==
               "\"num_key_value_heads\": 2,");
    auto bump = cktest::read_bump(out / "weights.bump");
    for (int layer = 0; layer < 2; ++layer) {
        std::string blk = "blk." + std::to_string(layer) + ".",
                    slot = "layer." + std::to_string(layer) + ".";
        BOOST_TEST((bump.slot(slot + "bq") == m.bytes(blk + "attn_q.bias")));
        BOOST_TEST((bump.slot(slot + "bk") == m.bytes(blk + "attn_k.bias")));
        BOOST_TEST((bump.slot(slot + "bv") == m.bytes(blk + "attn_v.bias")));
        BOOST_TEST((bump.slot(slot + "wq") == m.bytes(blk + "attn_q.weight")));
        BOOST_TEST((bump.slot(slot + "bo") == std::vector<std::byte>(256 * 4)));
    }
    auto v = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(v.exit_code == 0, v.err);

    // An untied output.weight on a qwen2 file: a warning, and a refusal with strict=1.
    shape.output_weight = true;
    ModelBuilder untied = ModelBuilder::llama_f32(shape);
    cktest::TempDir out2, out3;
    r = convert(untied, in, out2.path());
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "warning: bump: untied output.weight is dropped"), r.err);
    r = convert(untied, in, out3.path() / "x", "gguf:bump[strict=1]");
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "tensor 'output.weight'"), r.err);
    BOOST_TEST(contains(r.err, "strict=1"), r.err);
    BOOST_TEST(out3.entries().empty());
}

BOOST_AUTO_TEST_CASE(difference_3_bf16_and_f16_norms_are_widened_exactly) {
    ModelBuilder m = ModelBuilder::llama_f32({});
    // BF16 (ggml type 30): the upper half of the f32. F16: every value exactly, subnormals,
    // infinities and signed zero included.
    const std::vector<std::uint16_t> bf16_bits = {0x3F80, 0xBF80, 0x0000, 0x8000,
                                                  0x7F80, 0x3C23, 0x0001, 0x4049};
    const std::vector<std::uint16_t> f16_bits = {0x3C00, 0xBC00, 0x0000, 0x8000,
                                                 0x7C00, 0x0001, 0x03FF, 0x7BFF};
    const std::vector<float> f16_values = {1.0f,     -1.0f,    0.0f,         -0.0f,
                                           INFINITY, 0x1p-24f, 0x1.ff8p-15f, 65504.0f};
    std::vector<std::byte> bf16_bytes(256 * 2), f16_bytes(256 * 2);
    std::vector<float> bf16_expected(256), f16_expected(256);
    for (std::size_t i = 0; i < 256; ++i) {
        std::uint16_t b = bf16_bits[i % bf16_bits.size()], h = f16_bits[i % f16_bits.size()];
        ck::le::store(bf16_bytes.data() + 2 * i, b);
        ck::le::store(f16_bytes.data() + 2 * i, h);
        bf16_expected[i] = std::bit_cast<float>(std::uint32_t(b) << 16);
        f16_expected[i] = f16_values[i % f16_values.size()];
    }
    m.set_tensor("blk.0.attn_norm.weight", bf16, {256}, bf16_bytes);
    m.set_tensor("blk.1.ffn_norm.weight", f16, {256}, f16_bytes);
    m.set_tensor("output_norm.weight", bf16, {256}, bf16_bytes);
    cktest::TempDir in, out;
    auto r = convert(m, in, out.path());
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto bump = cktest::read_bump(out / "weights.bump");
    BOOST_TEST((bump.slot("layer.0.ln1_gamma") == as_bytes(bf16_expected)));
    BOOST_TEST((bump.slot("layer.1.ln2_gamma") == as_bytes(f16_expected)));
    BOOST_TEST((bump.slot("final_ln_weight") == as_bytes(bf16_expected)));
    BOOST_TEST((bump.slot("layer.0.ln2_gamma") == m.bytes("blk.0.ffn_norm.weight")));
    // Every non-weight slot stays FP32 (code 0) in the dtype table.
    BOOST_TEST(bump.file[132 + 2] == 0u);
}

BOOST_AUTO_TEST_CASE(difference_4_failure_halfway_leaves_nothing) {
    cktest::TempDir out;
    // Tensor 15 of 21: weights.bump is half written and config.json complete when it fails.
    auto r = cktest::run_ckhost({"--plugin-dir", cktest::test_plugin_dir().string(), "--pipeline",
                                 "gguf:testkit[fail_at=15,fail_with=ck]:bump", "-i", sample(), "-o",
                                 (out / "new" / "dir").string() + "/"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "testkit failed on purpose"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(difference_5_untied_output_weight) {
    // Different dtype (Q6_K vs Q4_K): known from the descriptors, refused before any byte.
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:bump", "-i", sample(), "-o", out.path().string() + "/", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST_REQUIRE(doc["warnings"].size() == 1u);
    BOOST_TEST(contains(doc["warnings"][0].get<std::string>(), "untied output.weight"));
    BOOST_TEST(doc["reports"]["bump.untied_output_weight"]["dropped"].get<bool>());
    BOOST_TEST(doc["reports"]["bump.untied_output_weight"]["tensor"].get<std::string>() ==
               "output.weight");
    BOOST_TEST(doc["checksums"].size() == 2u);

    cktest::TempDir strict;
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:bump[strict]", "-i", sample(), "-o", (strict / "o").string() + "/"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "tensor 'output.weight'"), r.err);
    BOOST_TEST(contains(r.err, "q6_K [256, 1024]"), r.err);
    BOOST_TEST(strict.entries().empty());

    // Same dtype and shape: the bytes decide. Equal bytes are a tied head: no warning, and the
    // file is the reference's (output.weight has no slot either way).
    ModelBuilder tied = ModelBuilder::from_gguf(sample());
    tied.set_tensor("output.weight", q4_k, {256, 1024}, tied.bytes("token_embd.weight"));
    cktest::TempDir in, tied_out;
    r = convert(tied, in, tied_out.path(), "gguf:bump[strict=1]");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(!contains(r.err, "warning"), r.err);
    BOOST_TEST(cktest::files_equal(tied_out / "weights.bump", golden_q4() / "weights.bump"));

    // Different bytes: warned about, or refused with strict=1 before any payload byte.
    ModelBuilder differs = tied;
    auto bytes = differs.bytes("output.weight");
    bytes[1000] ^= std::byte{1};
    differs.set_tensor("output.weight", q4_k, {256, 1024}, bytes);
    cktest::TempDir warned, refused;
    r = convert(differs, in, warned.path());
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "different bytes"), r.err);
    r = convert(differs, in, refused.path() / "o", "gguf:bump[strict=1]");
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "tensor 'output.weight'"), r.err);
    BOOST_TEST(refused.entries().empty());
}

BOOST_AUTO_TEST_CASE(difference_6_context_option_overrides) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump[context=1000]", "-i", sample(),
                                 "-o", out.path().string() + "/", "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto bump = cktest::read_bump(out / "weights.bump");
    BOOST_TEST(bump.u32_at(0x1C) == 1000u);  // context_len
    BOOST_TEST(bump.u64_at(0x38) == 1008u);  // aligned_context: a multiple of 16
    BOOST_TEST(bump.slot("pos_emb").size() == 4u * 1000 * 256);
    BOOST_TEST(config_line(out / "config.json", "max_position_embeddings") ==
               "\"max_position_embeddings\": 1000,");
    auto v = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(v.exit_code == 0, v.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_bump_differences
