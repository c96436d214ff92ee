// Today's architectures and C-Kernel-Engine: bump v3 and v4 (and headpack, which prepares heads
// for them) have slots and config.json keys for the plain llama graph only, so each model of
// ../shared/testdata/hf-arch/ that uses more is refused before anything is written: exit 1, one
// line naming the architecture, the tensor or key that shows the first feature, every feature
// that would be lost, and no output left behind (docs/decisions/0054). The files are
// llama.cpp's convert_hf_to_gguf.py outputs; each pipeline is one a user would try, with the
// dequant or quantize stage bump v3 needs for BF16 weights.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_bump_hf_arch {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

struct Refusal {
    std::string model;                // hf-arch/<model>-bf16.bf16.gguf
    std::string arch;                 // general.architecture
    std::string subject;              // the first feature's tensor or key
    std::vector<std::string> losses;  // fragments naming what would be lost
    std::vector<std::string> absent;  // fragments that must not appear
    // The subject after quantize, which puts tensors in llama.cpp's order (by name within a
    // layer), when that is another tensor.
    std::string subject_in_llama_order = {};
};

std::vector<Refusal> refusals() {
    return {
        {"llama31",
         "llama",
         "tensor 'rope_freqs.weight'",
         {"per-frequency RoPE factors", "rope_theta alone"},
         {"experts", "attention heads"}},
        {"qwen3",
         "qwen3",
         "tensor 'blk.0.attn_k_norm.weight'",
         {"per-head RMSNorms of queries and keys", "blk.0.attn_q_norm.weight",
          "attention heads 16 wide where the plain graph's are embedding_length / head_count = "
          "8 / 2 = 4",
          "qwen3.attention.key_length = 16, qwen3.attention.value_length = 16"},
         {"experts"}},
        {"qwen3moe",
         "qwen3moe",
         "tensor 'blk.0.ffn_down_exps.weight'",
         {"a mixture-of-experts feed-forward (4 experts, 2 per token)",
          "blk.0.ffn_gate_exps.weight", "per-head RMSNorms of queries and keys",
          "attention heads 16 wide"},
         {}},
        {"mixtral",
         "llama",
         "tensor 'blk.0.ffn_gate_inp.weight'",
         {"a mixture-of-experts feed-forward (4 experts, 2 per token)",
          "blk.0.ffn_gate_exps.weight", "and 6 more"},
         {"RMSNorms", "heads", "RoPE"},
         "tensor 'blk.0.ffn_down_exps.weight'"},
        {"gemma2",
         "gemma2",
         "tensor 'blk.0.post_attention_norm.weight'",
         {"RMSNorms after attention and after the feed-forward", "blk.0.post_ffw_norm.weight",
          "attention heads 48 wide", "logit soft-capping",
          "gemma2.attn_logit_softcapping = 50, gemma2.final_logit_softcapping = 30",
          "sliding-window attention (a window of 4096 tokens)",
          "Gemma's GELU feed-forward and embeddings scaled by sqrt(embedding_length)"},
         {"per-head"}},
        {"gemma3",
         "gemma3",
         "tensor 'blk.0.attn_k_norm.weight'",
         {"per-head RMSNorms of queries and keys", "RMSNorms after attention",
          "attention heads 32 wide", "sliding-window attention (a window of 512 tokens)",
          "gemma3.rope.freq_base_swa = 10000", "Gemma's GELU"},
         {"soft-capping"}},
        {"phi3",
         "phi3",
         "tensor 'blk.0.attn_qkv.weight'",
         {"query, key and value projections fused in one attn_qkv tensor",
          "gate and up projections fused in one ffn_up tensor: blk.0.ffn_up.weight",
          "sliding-window attention (a window of 2047 tokens)"},
         {"RoPE"}},
        // Its window (262144) is longer than its context (131072): no sliding window to lose.
        {"phi3-longrope",
         "phi3",
         "tensor 'blk.0.attn_qkv.weight'",
         {"fused in one attn_qkv tensor", "fused in one ffn_up tensor",
          "per-frequency RoPE factors", "rope_factors_long.weight, rope_factors_short.weight"},
         {"sliding-window"}},
        {"mistral-nemo",
         "llama",
         "key 'llama.attention.key_length'",
         {"attention heads 32 wide where the plain graph's are embedding_length / head_count = "
          "64 / 4 = 16"},
         {"experts", "RoPE"}},
    };
}

// The pipelines and the consumer each one's refusal names: headpack refuses first when it runs.
struct Pipeline {
    std::string stages;
    std::string consumer;
};
const Pipeline pipelines[] = {
    {"gguf:dequant[to=f32]:bump", "bump v3 cannot represent"},
    {"gguf:quantize[mix=q4_k_m]:headpack:bump", "headpack cannot represent"},
    {"gguf:bump[version=4]", "bump v4 cannot represent"},
    {"gguf:headpack:gguf", "headpack cannot represent"},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(bump_hf_arch)

BOOST_AUTO_TEST_CASE(what_c_kernel_engine_cannot_represent_is_refused_before_writing,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data() / "hf-arch";
    for (const Refusal& m : refusals()) {
        for (const Pipeline& p : pipelines) {
            BOOST_TEST_CONTEXT(m.model << " through " << p.stages) {
                cktest::TempDir out;
                const fs::path output =
                    p.stages.ends_with(":gguf") ? out / "padded.gguf" : out / "bump";
                const cktest::RunResult r = cktest::run_ckhost(
                    {"--pipeline", p.stages, "-i", (root / (m.model + "-bf16.bf16.gguf")).string(),
                     "-o", output.string() + (p.stages.ends_with(":gguf") ? "" : "/")});
                BOOST_TEST(r.exit_code == 1, r.err);
                BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
                const bool reordered =
                    contains(p.stages, "quantize") && !m.subject_in_llama_order.empty();
                const std::string subject = reordered ? m.subject_in_llama_order : m.subject;
                BOOST_TEST(contains(r.err, subject + ": " + p.consumer +
                                               " this model (architecture " + m.arch +
                                               "): C-Kernel-Engine's llama graph has no "
                                               "place for "),
                           r.err);
                for (const std::string& f : m.losses)
                    BOOST_TEST(contains(r.err, f), "'" << f << "' in: " << r.err);
                for (const std::string& f : m.absent)
                    BOOST_TEST(!contains(r.err, f), "'" << f << "' not in: " << r.err);
                BOOST_TEST(
                    contains(r.err, "; the model would run differently, so nothing was written"),
                    r.err);
                BOOST_TEST(out.entries().empty(), "left behind: " << out.entries().size());
            }
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_bump_hf_arch
