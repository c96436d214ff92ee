// Today's architectures against llama.cpp's converter: every checkpoint and output type in
// ../shared/testdata/hf-arch gives the converter's GGUF byte for byte (Llama 3.1's rope_freqs,
// Qwen3, Qwen3-MoE and Mixtral's stacked experts, Gemma 2/3's norm shift, Phi-3's fused tensors
// and long-context factors, Mistral-Nemo's head_dim); and what the converter does not take,
// refused with exit 1, the key or architecture named, nothing left behind.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "checkpoint_files.hpp"
#include "ck/context.hpp"
#include "generated_tensors.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_hf_arch {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using json = nlohmann::ordered_json;

namespace {

using cktest::hf::convert;
using cktest::hf::edit_config;
using cktest::hf::expect_refused;

std::optional<fs::path> arch_data() {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_regular_file(*shared / "hf-arch" / "llama31-bf16.bf16.gguf"))
        return std::nullopt;
    return *shared / "hf-arch";
}

struct ArchDataPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(arch_data().has_value());
        ok.message() << "../shared/testdata/hf-arch is absent: skipping the architecture tests";
        return ok;
    }
};

// A writable copy of hf-arch/<name> in `dir` under the same name (general.name comes from it).
// A file whose whole content is a relative path to a file beside it is a symbolic link that
// lost its kind in a copy of the test data (qwen3moe-bf16/tokenizer.json): its target is
// copied instead.
fs::path copy_checkpoint(const std::string& name, const cktest::TempDir& dir,
                         const std::string& as = {}) {
    const fs::path from = *arch_data() / name, to = dir / (as.empty() ? name : as);
    fs::create_directories(to);
    for (const auto& entry : fs::directory_iterator(from)) {
        fs::path source = entry.path();
        if (fs::file_size(source) < 256) {
            std::string text;
            std::getline(std::ifstream(source), text);
            if (text.starts_with("../") && fs::is_regular_file(from / text)) source = from / text;
        }
        fs::copy_file(source, to / entry.path().filename());
        fs::permissions(to / entry.path().filename(), fs::perms::owner_write,
                        fs::perm_options::add);
    }
    return to;
}

ck::ModelHeader read_gguf(const fs::path& file) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    return reader.open(file);
}

struct Reference {
    const char* folder;
    const char* outtype;
};
// The README's table: every checkpoint in bf16; Mixtral and Gemma 3 also in f16 and q8_0.
constexpr Reference references[] = {
    {"llama31-bf16", "bf16"},      {"qwen3-bf16", "bf16"},
    {"qwen3moe-bf16", "bf16"},     {"mixtral-bf16", "bf16"},
    {"mixtral-bf16", "f16"},       {"mixtral-bf16", "q8_0"},
    {"gemma2-bf16", "bf16"},       {"gemma3-bf16", "bf16"},
    {"gemma3-bf16", "f16"},        {"gemma3-bf16", "q8_0"},
    {"phi3-bf16", "bf16"},         {"phi3-longrope-bf16", "bf16"},
    {"mistral-nemo-bf16", "bf16"}, {"Phi-3-mini-4k-instruct", "bf16"},
};

std::string pipeline_for(const std::string& outtype) {
    if (outtype == "f16") return "hf:dequant[to=f16]:gguf";
    if (outtype == "q8_0") return "hf:quantize[to=q8_0]:gguf";
    return "hf:gguf";
}

// Global options under which every conversion must still give the reference bytes: whole
// tensors (these checkpoints' tensors are smaller than a row block), then row blocks of a
// single expert or whole heads (4K), and of several experts (64K).
const std::vector<std::vector<std::string>> block_sizes = {
    {"--json"},
    {"--json", "--max-memory", "4K", "--threads", "2"},
    {"--json", "--max-memory", "64K", "--threads", "2"}};

// How many row blocks the runner wrote (its JSON report's compute_ahead.row_blocks).
std::uint64_t row_blocks_written(const cktest::RunResult& r) {
    return nlohmann::json::parse(r.out).at("compute_ahead").at("row_blocks").get<std::uint64_t>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hf_arch)

BOOST_AUTO_TEST_CASE(each_checkpoint_is_the_converters_file,
                     *utf::precondition(ArchDataPresent())) {
    for (const Reference& ref : references)
        for (const auto& options : block_sizes) {
            BOOST_TEST_CONTEXT(ref.folder << " " << ref.outtype << " " << options.size()) {
                cktest::TempDir dir, out;
                const fs::path folder = copy_checkpoint(ref.folder, dir);
                const auto r = convert(pipeline_for(ref.outtype), folder, out / "m.gguf", options);
                BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
                BOOST_TEST((row_blocks_written(r) > 0) == (options.size() > 1));
                const fs::path expected =
                    *arch_data() / (std::string(ref.folder) + "." + ref.outtype + ".gguf");
                BOOST_TEST(cktest::files_equal(out / "m.gguf", expected));
            }
        }
}

// hf:quantize[mix=q4_k_m]:gguf equals the converter's bf16 file followed by llama-quantize
// Q4_K_M (tests/data/hf-arch-quant, made with llama.cpp's tools): the MoE and Gemma families
// and the others. Qwen3's files are too large to keep: their sha256 is.
BOOST_AUTO_TEST_CASE(q4_k_m_straight_from_the_checkpoint_is_llama_quantize_s,
                     *utf::precondition(ArchDataPresent())) {
    const fs::path refs = cktest::test_data() / "hf-arch-quant";
    for (const char* name : {"mixtral-bf16", "gemma2-bf16", "gemma3-bf16", "qwen3moe-bf16",
                             "llama31-bf16", "phi3-bf16", "mistral-nemo-bf16"}) {
        BOOST_TEST_CONTEXT(name) {
            cktest::TempDir dir, out;
            const fs::path folder = copy_checkpoint(name, dir);
            const auto r =
                convert("hf:quantize[mix=q4_k_m]:gguf", folder, out / "m.gguf", block_sizes[1]);
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            BOOST_TEST(row_blocks_written(r) > 0u);
            const fs::path expected = refs / (std::string(name) + ".q4_k_m.gguf");
            if (fs::exists(expected)) {
                BOOST_TEST(cktest::files_equal(out / "m.gguf", expected));
                continue;
            }
            std::string field, sum;
            std::ifstream(refs / (std::string(name) + ".q4_k_m.sha256")) >> field >> field >> sum;
            BOOST_TEST(cktest::sha256_of_file(out / "m.gguf") == sum);
        }
    }
}

// The README's float32 recipe for llama3's rope factors, on the values it quotes: the fifth is
// 0x402c732e, where evaluating in double and rounding once gives 0x402c732d.
BOOST_AUTO_TEST_CASE(llama3_rope_factors_round_as_torch_does) {
    ckplugin::hf::Llama3Rope rope;
    rope.base = 500000;
    const std::vector<float> v = ckplugin::hf::llama3_rope_factors(rope, 16);
    BOOST_TEST_REQUIRE(v.size() == 8u);
    BOOST_TEST(std::bit_cast<std::uint32_t>(v[4]) == 0x402c732eu);
    for (std::size_t i : {0, 1, 2, 3}) BOOST_TEST(v[i] == 1.0f);
    for (std::size_t i : {5, 6, 7}) BOOST_TEST(v[i] == 8.0f);
}

// Llama 3.2's shape: tied embeddings (no lm_head) and head_dim 64 with llama3 rope scaling:
// rope_freqs has head_dim / 2 values and no output tensor is written.
BOOST_AUTO_TEST_CASE(llama32_tied_with_head_dim, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = copy_checkpoint("llama31-bf16", dir);
    const auto source = cktest::hf::read_safetensors(folder / "model.safetensors");
    std::vector<std::string> names;
    for (const std::string& n : cktest::hf::tensor_names(source))
        if (n != "lm_head.weight") names.push_back(n);
    cktest::hf::write_shard(folder / "model.safetensors", source, names);
    edit_config(folder, [](json& c) {
        c["tie_word_embeddings"] = true;
        c["head_dim"] = 16;  // as Llama 3.2's configs state it
    });
    const auto r = convert("hf:gguf", folder, out / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const ck::ModelHeader h = read_gguf(out / "m.gguf");
    BOOST_TEST(h.find_tensor("output.weight") == nullptr);
    BOOST_TEST_REQUIRE(h.find_tensor("rope_freqs.weight") != nullptr);
    BOOST_TEST(h.find_tensor("rope_freqs.weight")->ne[0] == 8);
    BOOST_TEST(h.metadata.find("llama.attention.key_length")->as_uint().value() == 16u);
    BOOST_TEST(h.tensors.front().name == "rope_freqs.weight");
}

BOOST_AUTO_TEST_CASE(rope_scaling_type_not_taken_is_refused,
                     *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("llama31-bf16", dir);
    edit_config(folder, [](json& c) { c["rope_scaling"]["rope_type"] = "dynamic"; });
    expect_refused(folder, {"config.json", "rope_scaling", "'dynamic'", "llama3"});
}

BOOST_AUTO_TEST_CASE(llama3_scaling_on_qwen3_is_refused, *utf::precondition(ArchDataPresent())) {
    // Qwen3's converter class has no rope_freqs tensor: llama3 scaling would be lost.
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("qwen3-bf16", dir);
    edit_config(folder, [](json& c) {
        c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
    });
    expect_refused(folder, {"rope_scaling", "'llama3'", "qwen3"});
}

BOOST_AUTO_TEST_CASE(multimodal_checkpoint_is_refused, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("gemma3-bf16", dir);
    edit_config(folder, [](json& c) {
        c["architectures"] = {"Gemma3ForConditionalGeneration"};
        c["vision_config"] = {{"hidden_size", 32}};
    });
    expect_refused(folder, {"Gemma3ForConditionalGeneration", "vision/multimodal", "text"});
}

BOOST_AUTO_TEST_CASE(expert_beyond_the_count_is_refused, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("mixtral-bf16", dir);
    edit_config(folder, [](json& c) { c["num_local_experts"] = 3; });
    expect_refused(folder, {"experts.3.", "expert 3", "3 experts"});
}

BOOST_AUTO_TEST_CASE(missing_experts_are_refused, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("qwen3moe-bf16", dir);
    edit_config(folder, [](json& c) { c["num_experts"] = 5; });
    expect_refused(folder, {"layer 0", "12 of its 15 expert tensors", "incomplete"});
}

BOOST_AUTO_TEST_CASE(longrope_factors_of_the_wrong_length_are_refused,
                     *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("phi3-longrope-bf16", dir);
    edit_config(folder, [](json& c) { c["rope_scaling"]["short_factor"].push_back(1.5); });
    expect_refused(folder, {"rope_scaling", "long_factor and short_factor", "8 values"});
}

BOOST_AUTO_TEST_CASE(gemma3_attention_softcapping_is_refused,
                     *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("gemma3-bf16", dir);
    edit_config(folder, [](json& c) { c["attn_logit_softcapping"] = 50.0; });
    expect_refused(folder, {"attn_logit_softcapping", "gemma3"});
}

BOOST_AUTO_TEST_CASE(qwen3_reranker_is_refused, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = copy_checkpoint("qwen3-bf16", dir, "Qwen3-Reranker-0.6B");
    expect_refused(folder, {"qwen3-reranker", "classifier head"});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_hf_arch
