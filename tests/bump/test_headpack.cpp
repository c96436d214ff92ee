// headpack[align=N]: each head of attn_q/k/v (and biases) padded from hd to hd_a rows with zero
// rows, F32 and block-quantized rows alike; the padded size reaches the bump header; a no-op
// (byte-identical) when hd_a == hd; a refusal naming the tensor when rows are not heads x hd.
#include <boost/test/unit_test.hpp>

#include <map>

#include "bump_test_models.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/llama/llama_keys.hpp"
#include "headpack.hpp"
#include "inspect_output.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_headpack {

namespace fs = std::filesystem;
using cktest::contains;
using cktest::ModelBuilder;

namespace {

constexpr auto q4_k = static_cast<std::uint32_t>(ck::GgmlType::q4_k);

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

// `rows` rows of `row_bytes` each, padded per head: head h's rows land at h * hd_a.
void expect_head_padded(const std::vector<std::byte>& packed, const std::vector<std::byte>& source,
                        std::uint64_t heads, std::uint64_t hd, std::uint64_t hd_a,
                        std::uint64_t row_bytes) {
    BOOST_TEST_REQUIRE(packed.size() == heads * hd_a * row_bytes);
    BOOST_TEST_REQUIRE(source.size() == heads * hd * row_bytes);
    const std::vector<std::byte> zeros((hd_a - hd) * row_bytes);
    for (std::uint64_t h = 0; h < heads; ++h) {
        auto head = packed.begin() + static_cast<std::ptrdiff_t>(h * hd_a * row_bytes);
        auto from = source.begin() + static_cast<std::ptrdiff_t>(h * hd * row_bytes);
        auto head_bytes = static_cast<std::ptrdiff_t>(hd * row_bytes);
        BOOST_TEST(std::equal(head, head + head_bytes, from), "head " << h << " rows");
        BOOST_TEST(std::equal(head + head_bytes,
                              head + head_bytes + static_cast<std::ptrdiff_t>(zeros.size()),
                              zeros.begin()),
                   "head " << h << " padding");
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(headpack)

BOOST_AUTO_TEST_CASE(head_dim_72_f32_is_padded_to_80) {
    cktest::LlamaShape shape;
    shape.embed = 288;  // 4 heads of 72: 288 bytes per head, 320 after aligning to 64
    shape.heads = 4;
    shape.kv_heads = 2;
    shape.ffn = 320;
    shape.qkv_biases = true;
    ModelBuilder m = ModelBuilder::llama_f32(shape);
    cktest::TempDir in, out;
    m.write(in / "hd72.gguf");
    auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump", "-i",
                                 (in / "hd72.gguf").string(), "-o", out.path().string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);

    auto bump = cktest::read_bump(out / "weights.bump");
    BOOST_TEST(bump.u32_at(0x24) == 72u);   // head_dim
    BOOST_TEST(bump.u64_at(0x30) == 80u);   // aligned_head_dim
    BOOST_TEST(bump.u64_at(0x28) == 288u);  // aligned_embed_dim: not aligned, as the reference
    for (int layer = 0; layer < 2; ++layer) {
        std::string blk = "blk." + std::to_string(layer) + ".",
                    slot = "layer." + std::to_string(layer) + ".";
        BOOST_TEST_CONTEXT("layer " << layer) {
            expect_head_padded(bump.slot(slot + "wq"), m.bytes(blk + "attn_q.weight"), 4, 72, 80,
                               288 * 4);
            expect_head_padded(bump.slot(slot + "wk"), m.bytes(blk + "attn_k.weight"), 2, 72, 80,
                               288 * 4);
            expect_head_padded(bump.slot(slot + "wv"), m.bytes(blk + "attn_v.weight"), 2, 72, 80,
                               288 * 4);
            expect_head_padded(bump.slot(slot + "bq"), m.bytes(blk + "attn_q.bias"), 4, 72, 80, 4);
            expect_head_padded(bump.slot(slot + "bk"), m.bytes(blk + "attn_k.bias"), 2, 72, 80, 4);
            // Wo and the FFN are untouched.
            BOOST_TEST((bump.slot(slot + "wo") == m.bytes(blk + "attn_output.weight")));
        }
    }
    auto v = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(v.exit_code == 0, v.err);
    auto inspect = cktest::run_ckhost({"inspect", (out / "weights.bump").string(), "--tensors"});
    BOOST_TEST(contains(inspect.out, "aligned_head_dim: 80"), inspect.out);
    BOOST_TEST(contains(cktest::squeezed(inspect.out), "  layer.0.wq  f32  [288, 320]  92,160  "),
               inspect.out);
}

BOOST_AUTO_TEST_CASE(block_quantized_rows_are_padded_with_zero_rows) {
    // align=512 bytes: hd 64 -> 128. Q4_K and Q6_K rows (blk.1.attn_v) are copied whole.
    ModelBuilder m = ModelBuilder::from_gguf(sample());
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack[align=512]:bump", "-i", sample(),
                                 "-o", out.path().string() + "/", "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto bump = cktest::read_bump(out / "weights.bump");
    BOOST_TEST(bump.u64_at(0x30) == 128u);
    const std::uint64_t q4_row = 144, q6_row = 210;  // one 256-element block per row
    expect_head_padded(bump.slot("layer.0.wq"), m.bytes("blk.0.attn_q.weight"), 4, 64, 128, q4_row);
    expect_head_padded(bump.slot("layer.0.wk"), m.bytes("blk.0.attn_k.weight"), 2, 64, 128, q4_row);
    expect_head_padded(bump.slot("layer.1.wv"), m.bytes("blk.1.attn_v.weight"), 2, 64, 128, q6_row);
    BOOST_TEST(bump.slot("layer.0.bq").size() == 4u * 4 * 128);
    BOOST_TEST(bump.file[132 + 2 + 14 + 6] == 7u);  // layer.1.wv stays Q6_K in the table
    auto v = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(v.exit_code == 0, v.err);
}

BOOST_AUTO_TEST_CASE(no_op_when_heads_are_already_aligned) {
    cktest::TempDir out;
    // Through the GGUF writer: not even the metadata changes.
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:headpack:gguf", "-i", sample(), "-o", (out / "same.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(sample(), out / "same.gguf"));
    r = cktest::run_ckhost({"--pipeline", "gguf:headpack[align=256]:bump", "-i", sample(), "-o",
                            out.path().string() + "/", "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(
        out / "weights.bump",
        cktest::test_data() / "golden" / "micro-llama-q4_k_m" / "weights.bump"));
}

BOOST_AUTO_TEST_CASE(plan_sets_the_aligned_head_dim_key) {
    ModelBuilder hd72 = ModelBuilder::llama_f32({.embed = 288, .heads = 4, .kv_heads = 2});
    ckplugin::headpack::Headpack pack(
        ck::Options(std::map<std::string, std::string>{{"align", "64"}}));
    ck::ModelHeader planned = pack.plan(hd72.header());
    const ck::Value* v = planned.metadata.find(ck::llama::aligned_head_dim_key);
    BOOST_TEST_REQUIRE(v != nullptr);
    BOOST_TEST((v->type() == ck::ValueType::u32));
    BOOST_TEST(v->raw() == 80u);
    const ck::TensorInfo* q = planned.find_tensor("blk.0.attn_q.weight");
    BOOST_TEST((q->ne == std::vector<std::int64_t>{288, 320}));
    BOOST_TEST(q->nbytes == 288u * 320 * 4);
    BOOST_TEST(planned.find_tensor("blk.0.attn_k.weight")->ne[1] == 160);

    // Aligned already: the header comes back unchanged, without the key.
    ModelBuilder hd64 = ModelBuilder::llama_f32({});
    ck::ModelHeader same = pack.plan(hd64.header());
    BOOST_TEST(!same.metadata.contains(ck::llama::aligned_head_dim_key));
    BOOST_TEST(same.tensors.size() == hd64.header().tensors.size());

    // Twice in one pipeline would pad padded heads.
    BOOST_CHECK_THROW(pack.plan(planned), ck::Error);
}

BOOST_AUTO_TEST_CASE(refuses_rows_that_are_not_heads_times_head_dim) {
    ModelBuilder m = ModelBuilder::from_gguf(sample());
    m.set_zeros("blk.1.attn_k.weight", q4_k, {256, 192});
    cktest::TempDir in, out;
    m.write(in / "bad.gguf");
    for (std::string pipeline : {"gguf:headpack:bump", "gguf:headpack[align=512]:bump"}) {
        auto r = cktest::run_ckhost({"--pipeline", pipeline, "-i", (in / "bad.gguf").string(), "-o",
                                     (out / "o").string() + "/"});
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, "tensor 'blk.1.attn_k.weight'"), r.err);
        BOOST_TEST(contains(r.err, "[256, 192]"), r.err);
        BOOST_TEST(contains(r.err, "expected [256, 128]"), r.err);
        BOOST_TEST(out.entries().empty());
    }
}

BOOST_AUTO_TEST_CASE(align_must_be_a_positive_multiple_of_4) {
    cktest::TempDir out;
    for (std::string stage : {"headpack[align=0]", "headpack[align=6]", "headpack[align=x]"}) {
        auto r = cktest::run_ckhost({"--pipeline", "gguf:" + stage + ":bump", "-i", sample(), "-o",
                                     out.path().string() + "/"});
        BOOST_TEST(r.exit_code == 2, stage << ": " << r.err);
    }
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_headpack
