// The dequant and quantize stages through the real binary: outputs are valid GGUFs whose
// tensors are ggml's values, llama.cpp's quantized files are reproduced byte for byte, and
// what cannot be converted is refused with the tensor named and nothing left behind.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <vector>

#include "ck/context.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/plugin.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "io/checksum.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_dequant_quantize {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

// Checks that `converted` holds every tensor of `source` dequantized by the scalar reference
// (the plugin itself uses the best SIMD variant), rounded to f16 when `f16` is set.
void check_dequantized(const fs::path& source, const fs::path& converted, bool f16) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader in(context), out(context);
    const ck::ModelHeader a = in.open(source), b = out.open(converted);
    BOOST_TEST_REQUIRE(a.tensors.size() == b.tensors.size());
    BOOST_TEST(a.metadata.size() == b.metadata.size());
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        const auto& t = a.tensors[i];
        BOOST_TEST(b.tensors[i].name == t.name);
        BOOST_TEST(b.tensors[i].ne == t.ne);
        // 1-D tensors (norms) stay f32 with to=f16, as llama.cpp's converters store them.
        const bool to_f16 = f16 && t.ne.size() > 1;
        const std::uint32_t want_type = to_f16 ? 1u : 0u;
        const bool converts = t.type != want_type;
        BOOST_TEST(b.tensors[i].type == (converts ? want_type : t.type), t.name);
        std::vector<float> values(t.elements());
        ck::kernels::scalar_dequant_table().fn[t.type](in.tensor(i).bytes().data(), values.data(),
                                                       values.size());
        std::vector<std::byte> expected(values.size() * (to_f16 ? 2 : 4));
        if (to_f16) {
            for (std::size_t j = 0; j < values.size(); ++j) {
                const std::uint16_t h = ck::kernels::f32_to_f16(values[j]);
                ck::le::store(expected.data() + 2 * j, h);
            }
        } else {
            ck::le::store_array(expected.data(), values.data(), values.size());
        }
        auto got = out.tensor(i).bytes();
        BOOST_TEST(std::equal(got.begin(), got.end(), expected.begin(), expected.end()),
                   t.name << " differs");
    }
}

cktest::RunResult convert(const std::string& pipeline, const fs::path& in, const fs::path& out) {
    return cktest::run_ckhost({"--pipeline", pipeline, "-i", in.string(), "-o", out.string()});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dequant_quantize)

BOOST_AUTO_TEST_CASE(dequant_sample_to_f32_and_f16) {
    cktest::TempDir dir;
    for (bool f16 : {false, true}) {
        fs::path out = dir / (f16 ? "f16.gguf" : "f32.gguf");
        auto r =
            convert(f16 ? "gguf:dequant[to=f16]:gguf" : "gguf:dequant[to=f32]:gguf", sample(), out);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        check_dequantized(sample(), out, f16);
        auto verify = cktest::run_ckhost({"verify", out.string()});
        BOOST_TEST(verify.exit_code == 0, verify.err);
    }
}

BOOST_AUTO_TEST_CASE(dequant_tiny_llama, *utf::precondition(cktest::SharedDataPresent())) {
    cktest::TempDir dir;
    const fs::path in = *cktest::shared_data() / "tiny-llama-q4_0.gguf";
    for (bool f16 : {false, true}) {
        fs::path out = dir / "out.gguf";
        auto r = cktest::run_ckhost(
            {"--pipeline", f16 ? "gguf:dequant[to=f16]:gguf" : "gguf:dequant[to=f32]:gguf", "-i",
             in.string(), "-o", out.string(), "--force"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        check_dequantized(in, out, f16);
    }
}

BOOST_AUTO_TEST_CASE(only_and_skip_select_tensors) {
    cktest::TempDir dir;
    auto r =
        convert("gguf:dequant[to=f32,only=blk.1.*,skip=*ffn_down*]:gguf", sample(), dir / "o.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader out(context);
    for (const auto& t : out.open(dir / "o.gguf").tensors) {
        const bool selected =
            t.name.rfind("blk.1.", 0) == 0 && t.name.find("ffn_down") == std::string::npos;
        if (selected) BOOST_TEST(t.type == 0u, t.name);
        const bool kept = t.type != 0u || t.name.find("norm") != std::string::npos;
        if (!selected) BOOST_TEST(kept, t.name);
    }
}

BOOST_AUTO_TEST_CASE(quantize_reproduces_llama_cpp,
                     *utf::precondition(cktest::SharedDataPresent())) {
    cktest::TempDir dir;
    const fs::path root = *cktest::shared_data();
    for (const std::string type : {"q8_0", "q4_0"}) {
        fs::path out = dir / (type + ".gguf");
        auto r = convert("gguf:quantize[to=" + type + "]:gguf", root / "micro-llama-f16.gguf", out);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        // Every tensor, the metadata (file_type, quantization_version) and the layout: the whole
        // file is what llama.cpp wrote.
        BOOST_TEST(cktest::files_equal(out, root / ("micro-llama-" + type + ".gguf")), type);
    }
}

BOOST_AUTO_TEST_CASE(f16_model_through_dequant_matches_the_f32_bump_golden,
                     *utf::precondition(cktest::SharedDataPresent())) {
    // bump stores only FP32/Q4_K/Q6_K weights; an F16 model needs dequant first, and then must
    // give exactly the reference converter's output for the F32 model (f16 widens exactly).
    cktest::TempDir dir;
    const fs::path golden = cktest::test_data() / "golden" / "micro-llama-f32";
    auto r = cktest::run_ckhost({"--pipeline", "gguf:dequant[to=f32]:headpack:bump", "-i",
                                 (*cktest::shared_data() / "micro-llama-f16.gguf").string(), "-o",
                                 (dir / "out").string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto expected_hash = cktest::read_file(golden / "weights.bump.sha256");
    const std::string hash(expected_hash.begin(), expected_hash.begin() + 64);
    BOOST_TEST(ckhost::sha256_file(dir / "out" / "weights.bump") == hash);
    auto size_text = cktest::read_file(golden / "weights.bump.size");
    BOOST_TEST(fs::file_size(dir / "out" / "weights.bump") ==
               std::stoull(std::string(size_text.begin(), size_text.end())));
    BOOST_TEST(cktest::files_equal(dir / "out" / "config.json", golden / "config.json"));
    // Without dequant the writer refuses and says what to add.
    r = cktest::run_ckhost({"--pipeline", "gguf:bump", "-i",
                            (*cktest::shared_data() / "micro-llama-f16.gguf").string(), "-o",
                            (dir / "refused").string() + "/"});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "dequant[to=f32]"), r.err);
    BOOST_TEST(!fs::exists(dir / "refused"));
}

BOOST_AUTO_TEST_CASE(quantized_input_needs_requantize_or_keep_quantized) {
    cktest::TempDir dir;
    auto r = convert("gguf:quantize[to=q8_0]:gguf", sample(), dir / "o.gguf");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "tensor 'token_embd.weight'"), r.err);
    BOOST_TEST(contains(r.err, "is already q4_K"), r.err);
    BOOST_TEST(contains(r.err, "requantize=1"), r.err);
    BOOST_TEST(contains(r.err, "keep_quantized=1"), r.err);
    BOOST_TEST(dir.entries().empty());
    // requantize=1 is a dequant stage and a quantize stage in one: the same bytes.
    r = convert("gguf:dequant:quantize[to=q8_0]:gguf", sample(), dir / "two.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = convert("gguf:quantize[to=q8_0,requantize=1]:gguf", sample(), dir / "one.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(dir / "one.gguf", dir / "two.gguf"));
    // keep_quantized=1 copies them: the sample has nothing else to quantize.
    r = convert("gguf:quantize[to=q8_0,keep_quantized=1]:gguf", sample(), dir / "kept.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = convert("gguf:quantize[to=q8_0,requantize=1,keep_quantized=1]:gguf", sample(),
                dir / "both.gguf");
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "contradict"), r.err);
}

BOOST_AUTO_TEST_CASE(refusals_name_the_tensor_and_leave_nothing) {
    cktest::TempDir dir;
    const fs::path bad = cktest::test_data() / "bad";
    struct Case {
        std::string file, expected;
    };
    for (const Case& c :
         {Case{"tensor_type_9_q8_1.gguf", "no dequantizer"},     // Q8_1 has no to_float
          Case{"trunc_mid_tensor_data.gguf", "tensor 1 'b'"},    // truncated blocks
          Case{"tensor_type_43.gguf", "tensor 1 'b'"},           // unknown type id
          Case{"tensor_type_4.gguf", "removed"},                 // removed type id
          Case{"tensor_data_past_eof.gguf", "tensor 2 'c'"}}) {  // size does not fit
        auto r = convert("gguf:dequant:gguf", bad / c.file, dir / "o.gguf");
        BOOST_TEST(r.exit_code == 1, c.file);
        BOOST_TEST(contains(r.err, c.expected), c.file << ": " << r.err);
        BOOST_TEST(dir.entries().empty(), c.file);
    }
    auto r = convert("gguf:dequant:gguf", bad / "tensor_type_9_q8_1.gguf", dir / "o.gguf");
    BOOST_TEST(contains(r.err, "tensor 'q'"), r.err);
}

BOOST_AUTO_TEST_CASE(plugins_report_their_kernel_variant) {
    auto r = cktest::run_ckhost({"plugins"});
    const std::string best(ck::isa_name(ck::best_supported_isa(ck::cpu_features())));
    BOOST_TEST(contains(r.out, "kernels: " + best), r.out);
    r = cktest::run_ckhost({"plugins", "--isa", "scalar"});
    BOOST_TEST(contains(r.out, "dequant  (transform)  version 1.0.0  ABI " +
                                   std::to_string(CK_PLUGIN_ABI_VERSION) + "  kernels: scalar"),
               r.out);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_dequant_quantize
