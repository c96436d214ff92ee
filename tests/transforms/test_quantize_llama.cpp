// `quantize` against llama-quantize's own files: every output in ../shared/testdata/quant/
// (llama.cpp 0.5.0-dev / ggml 0.25.1, no importance matrix; its README lists how each was made)
// made again by ckhost from the same input with the same settings. Same tensor names, types,
// shapes and data bytes, same general.file_type and general.quantization_version; a failure
// lists every tensor that differs.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_llama {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;

namespace {

struct Case {
    std::string input;     // relative to the shared test data
    std::string options;   // the quantize stage's options
    std::string expected;  // llama-quantize's output, in quant/
};

std::vector<Case> cases() {
    std::vector<Case> all;
    for (const char* mix :
         {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k_s", "q3_k_m", "q3_k_l", "q4_k_s",
          "q4_k_m", "q5_k_s", "q5_k_m", "q6_k", "iq4_nl", "tq1_0", "tq2_0", "f16", "bf16"})
        all.push_back({"micro-llama-f16.gguf", std::string("mix=") + mix,
                       std::string("micro-llama-f16.") + mix + ".gguf"});
    all.push_back(
        {"micro-llama-f16.gguf", "mix=q4_k_m,pure=1", "micro-llama-f16.q4_k_m-pure.gguf"});
    all.push_back({"micro-llama-f16.gguf", "mix=Q4_K_M,output_type=q8_0,embd_type=q8_0",
                   "micro-llama-f16.q4_k_m-out_q8_0-embd_q8_0.gguf"});
    all.push_back({"micro-llama-f32.gguf", "mix=q4_k_m", "micro-llama-f32.q4_k_m.gguf"});
    all.push_back({"micro-llama-q8_0.gguf", "mix=q4_k_m,requantize=1",
                   "micro-llama-q8_0.requant.q4_k_m.gguf"});
    for (const char* mix :
         {"q4_0", "q8_0", "q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "iq4_nl", "tq2_0"})
        all.push_back({"quant/micro-odd-f16.gguf", std::string("mix=") + mix,
                       std::string("micro-odd-f16.") + mix + ".gguf"});
    return all;
}

std::optional<std::uint64_t> uint_key(const ck::ModelHeader& h, const char* key) {
    const ck::Value* v = h.metadata.find(key);
    return v ? v->as_uint() : std::nullopt;
}

// Every way `ours` differs from `theirs`, one line each.
std::vector<std::string> differences(const fs::path& ours_path, const fs::path& theirs_path) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader ours(context), theirs(context);
    const ck::ModelHeader a = ours.open(ours_path), b = theirs.open(theirs_path);
    std::vector<std::string> problems;
    for (const char* key : {"general.file_type", "general.quantization_version"})
        if (uint_key(a, key) != uint_key(b, key))
            problems.push_back(
                std::string(key) + ": ours " + std::to_string(uint_key(a, key).value_or(~0ull)) +
                ", llama-quantize " + std::to_string(uint_key(b, key).value_or(~0ull)));
    if (a.tensors.size() != b.tensors.size())
        problems.push_back(std::to_string(a.tensors.size()) + " tensors, llama-quantize wrote " +
                           std::to_string(b.tensors.size()));
    std::map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < a.tensors.size(); ++i) by_name[a.tensors[i].name] = i;
    for (std::size_t j = 0; j < b.tensors.size(); ++j) {
        const ck::TensorInfo& t = b.tensors[j];
        auto it = by_name.find(t.name);
        if (it == by_name.end()) {
            problems.push_back(t.name + ": missing");
            continue;
        }
        const ck::TensorInfo& u = a.tensors[it->second];
        if (u.type != t.type || u.ne != t.ne) {
            problems.push_back(t.name + ": ours " + std::string(ck::type_name(u.type)) + " " +
                               u.shape_string() + ", llama-quantize " +
                               std::string(ck::type_name(t.type)) + " " + t.shape_string());
            continue;
        }
        const ck::TensorView x = ours.tensor(it->second), y = theirs.tensor(j);
        if (x.size() != y.size() || std::memcmp(x.data(), y.data(), x.size()) != 0) {
            std::size_t at = 0;
            while (at < std::min(x.size(), y.size()) && x.data()[at] == y.data()[at]) ++at;
            problems.push_back(t.name + " (" + std::string(ck::type_name(t.type)) +
                               "): data differs from byte " + std::to_string(at));
        }
    }
    return problems;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_llama)

BOOST_AUTO_TEST_CASE(every_llama_quantize_output_is_made_again_byte_for_byte,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    for (const Case& c : cases()) {
        BOOST_TEST_CONTEXT(c.expected << " (quantize[" << c.options << "] of " << c.input << ")") {
            const fs::path out = dir / c.expected;
            auto r = cktest::run_ckhost({"--pipeline", "gguf:quantize[" + c.options + "]:gguf",
                                         "-i", (root / c.input).string(), "-o", out.string()});
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            std::string list;
            for (const std::string& p : differences(out, root / "quant" / c.expected))
                list += "\n  " + p;
            BOOST_TEST(list.empty(), "differs from llama-quantize:" << list);
            // And the whole file: llama-quantize's tensor order and metadata order too.
            BOOST_TEST(cktest::files_equal(out, root / "quant" / c.expected));
        }
    }
}

// order=input keeps the input's tensor order and metadata positions; the tensors are the same.
BOOST_AUTO_TEST_CASE(order_input_keeps_the_inputs_layout,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:quantize[mix=q4_k_m,order=input]:gguf", "-i",
                                 (root / "micro-llama-f16.gguf").string(), "-o",
                                 (dir / "input-order.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader ours(context), input(context);
    const ck::ModelHeader a = ours.open(dir / "input-order.gguf");
    const ck::ModelHeader b = input.open(root / "micro-llama-f16.gguf");
    BOOST_TEST_REQUIRE(a.tensors.size() == b.tensors.size());
    for (std::size_t i = 0; i < a.tensors.size(); ++i)
        BOOST_TEST(a.tensors[i].name == b.tensors[i].name);
    BOOST_TEST(differences(dir / "input-order.gguf", root / "quant" / "micro-llama-f16.q4_k_m.gguf")
                   .empty());
    BOOST_TEST(!cktest::files_equal(dir / "input-order.gguf",
                                    root / "quant" / "micro-llama-f16.q4_k_m.gguf"));
    auto bad = cktest::run_ckhost({"--pipeline", "gguf:quantize[mix=q4_k_m,order=name]:gguf", "-i",
                                   (root / "micro-llama-f16.gguf").string(), "-o",
                                   (dir / "bad.gguf").string()});
    BOOST_TEST(bad.exit_code == 2);
    BOOST_TEST(bad.err.find("order") != std::string::npos, bad.err);
    BOOST_TEST(!fs::exists(dir / "bad.gguf"));
}

// Every kernel variant (--isa) writes llama-quantize's bytes: the SIMD K-quant quantizers are
// bit-identical to the scalar ones.
BOOST_AUTO_TEST_CASE(every_kernel_variant_gives_the_same_file,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    // --isa refuses another architecture's variants (s390x has the scalar ones only).
    std::vector<std::string> isas = {"scalar"};
    if (cktest::x86_simd_built) isas.insert(isas.end(), {"avx2", "avx512"});
    if (cktest::neon_built) isas.push_back("neon");
    for (const std::string& isa : isas) {
        const fs::path out = dir / (isa + ".gguf");
        auto r =
            cktest::run_ckhost({"--isa", isa, "--pipeline", "gguf:quantize[mix=q5_k_m]:gguf", "-i",
                                (root / "micro-llama-f16.gguf").string(), "-o", out.string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        std::string list;
        for (const std::string& p :
             differences(out, root / "quant" / "micro-llama-f16.q5_k_m.gguf"))
            list += "\n  " + p;
        BOOST_TEST(list.empty(), "--isa " << isa << " differs from llama-quantize:" << list);
    }
}

// --dry-run names every tensor's type and the rule that chose it; --json lists them too, with
// the bits per weight of the result.
BOOST_AUTO_TEST_CASE(dry_run_and_report_say_why_each_type_was_chosen,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path input = *cktest::shared_data() / "micro-llama-f16.gguf";
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:quantize[mix=q4_k_m]:gguf", "-i",
                                 input.string(), "-o", (dir / "o.gguf").string(), "--dry-run"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::contains(r.out, "output.weight: gguf f16"), r.out);
    BOOST_TEST(cktest::contains(r.out, "-> quantize q6_K"), r.out);
    BOOST_TEST(cktest::contains(r.out, "[output.weight: Q6_K]"), r.out);
    BOOST_TEST(cktest::contains(r.out, "more bits"), r.out);
    BOOST_TEST(cktest::contains(r.out, "[1-D tensor: copied]"), r.out);
    BOOST_TEST(dir.entries().empty());

    r = cktest::run_ckhost({"--json", "--pipeline", "gguf:quantize[mix=q4_k_m]:gguf", "-i",
                            input.string(), "-o", (dir / "o.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto report = nlohmann::json::parse(r.out)["reports"]["quantize"];
    BOOST_TEST(report["mix"].get<std::string>() == "Q4_K_M");
    BOOST_TEST(report["file_type"].get<unsigned>() == 15u);
    const double bpw = report["totals"]["bits_per_weight"].get<double>();
    BOOST_TEST(bpw > 4.5);
    BOOST_TEST(bpw < 6.0);
    BOOST_TEST(report["totals"]["bits_per_weight_in"].get<double>() > 15.9);
    std::size_t q6 = 0;
    for (const auto& t : report["tensors"]) q6 += t["to"].get<std::string>() == "q6_K";
    BOOST_TEST(q6 == 3u);  // output.weight, blk.1.attn_v, blk.1.ffn_down
}

// The main job from an F16 download: quantizing to Q4_K_M in the pipeline gives exactly the bump
// file C-Kernel-Engine's converter made from llama.cpp's own Q4_K_M of the same weights.
BOOST_AUTO_TEST_CASE(f16_to_q4_k_m_to_bump_is_the_golden_file,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"--quiet", "--pipeline", "gguf:quantize[mix=q4_k_m]:headpack:bump",
                                 "-i", (root / "micro-llama-f16.gguf").string(), "-o",
                                 (dir / "out").string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const fs::path golden = root / "golden" / "micro-llama-q4_k_m";
    BOOST_TEST(cktest::files_equal(dir / "out" / "weights.bump", golden / "weights.bump"));
    BOOST_TEST(cktest::files_equal(dir / "out" / "config.json", golden / "config.json"));
}

// Tensor name -> (type, data bytes) of a GGUF file, and its general.file_type.
struct Tensors {
    std::map<std::string, std::pair<std::uint32_t, std::vector<std::byte>>> by_name;
    std::optional<std::uint64_t> file_type;
};

Tensors tensors_of(const fs::path& file) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader h = reader.open(file);
    Tensors out;
    out.file_type = uint_key(h, "general.file_type");
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        const ck::TensorView view = reader.tensor(i);
        const auto bytes = view.bytes();
        out.by_name[h.tensors[i].name] = {h.tensors[i].type,
                                          std::vector<std::byte>(bytes.begin(), bytes.end())};
    }
    return out;
}

// llama-quantize's F32 file type: every 2-D weight widened exactly (the values dequant[to=f32]
// gives), 1-D tensors as they were, general.file_type ALL_F32 (0). It was a SIGSEGV: the plugin
// had no row function for F32 and called through a null pointer.
void check_mix_f32(const fs::path& input, const std::string& options) {
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:quantize[mix=f32" + options + "]:gguf", "-i",
                                 input.string(), "-o", (dir / "f32.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost({"--pipeline", "gguf:dequant[to=f32]:gguf", "-i", input.string(), "-o",
                            (dir / "widened.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const Tensors ours = tensors_of(dir / "f32.gguf"), widened = tensors_of(dir / "widened.gguf");
    BOOST_TEST((ours.file_type == std::optional<std::uint64_t>(0)));
    BOOST_TEST_REQUIRE(ours.by_name.size() == widened.by_name.size());
    for (const auto& [name, tensor] : ours.by_name) {
        BOOST_TEST(tensor.first == 0u, name);  // F32
        BOOST_TEST((tensor.second == widened.by_name.at(name).second), name);
    }
}

BOOST_AUTO_TEST_CASE(mix_f32_widens_every_weight_exactly) {
    check_mix_f32(cktest::sample_model(), ",requantize=1");
}

BOOST_AUTO_TEST_CASE(mix_f32_from_f16_and_bf16, *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    check_mix_f32(root / "micro-llama-f16.gguf", "");
    check_mix_f32(root / "quant" / "micro-llama-f16.bf16.gguf", "");
}

// llama-quantize's spellings work: type names in any case (`to=Q4_K`, handed to the plugin as
// `q4_k`, which matters for plugins that compare values exactly: `dequant[to=F16]` must give F16,
// not fall through to F32) and file type numbers (`mix=15` is Q4_K_M); a near miss suggests
// the mixture meant.
BOOST_AUTO_TEST_CASE(llama_quantize_spellings_are_accepted) {
    cktest::TempDir dir;
    const std::string input = cktest::sample_model().string();
    auto convert = [&](const std::string& pipeline, const std::string& name) {
        const auto r = cktest::run_ckhost(
            {"-q", "--pipeline", pipeline, "-i", input, "-o", (dir / name).string()});
        BOOST_TEST(r.exit_code == 0, pipeline << ": " << r.err);
        return dir / name;
    };
    BOOST_TEST(cktest::files_equal(convert("gguf:quantize[to=Q4_K,requantize=1]:gguf", "a.gguf"),
                                   convert("gguf:quantize[to=q4_k,requantize=1]:gguf", "b.gguf")));
    BOOST_TEST(
        cktest::files_equal(convert("gguf:quantize[mix=15,requantize=1]:gguf", "c.gguf"),
                            convert("gguf:quantize[mix=q4_k_m,requantize=1]:gguf", "d.gguf")));
    const Tensors upper = tensors_of(convert("gguf:dequant[to=F16]:gguf", "e.gguf"));
    BOOST_TEST(upper.by_name.at("blk.0.attn_q.weight").first == 1u);  // F16
    // A quantized input to a float type: exact, but asked for as llama-quantize asks for it.
    const auto f32 = cktest::run_ckhost({"--pipeline", "gguf:quantize[mix=f32]:gguf", "-i", input,
                                         "-o", (dir / "g.gguf").string()});
    BOOST_TEST(f32.exit_code == 1, f32.err);
    BOOST_TEST(cktest::contains(f32.err, "widening it to f32 is exact"), f32.err);
    BOOST_TEST(!cktest::contains(f32.err, "adds the error of both"), f32.err);
    BOOST_TEST(!fs::exists(dir / "g.gguf"));
    const auto r = cktest::run_ckhost({"--pipeline", "gguf:quantize[mix=q4km]:gguf", "-i", input,
                                       "-o", (dir / "f.gguf").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(cktest::contains(r.err, "did you mean 'q4_k_m'"), r.err);
    BOOST_TEST(!fs::exists(dir / "f.gguf"));
}

BOOST_AUTO_TEST_CASE(bad_settings_are_usage_errors) {
    cktest::TempDir dir;
    const std::string input = (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
    struct Bad {
        std::string options, message;
    };
    for (const Bad& b :
         {Bad{"mix=q4_k_x", "unknown mix 'q4_k_x'"}, Bad{"mix=q1_0", "unknown mix 'q1_0'"},
          Bad{"to=q4_k,mix=q4_k_m", "not both"},
          Bad{"to=q8_0,pure=1", "pure works with mix=NAME only"},
          Bad{"mix=q4_k_m,output_type=q8_k", "output_type=q8_k: no quantizer"},
          Bad{"mix=q4_k_m,include_weights=blk", "give imatrix=FILE too"},
          Bad{"mix=q4_k_m,prune_layers=1 x", "'x' is not a layer number"},
          Bad{"mix=q4_k_m,tensor_type=attn_v", "is not PATTERN=TYPE"},
          Bad{"mix=q4_k_m,tensor_type=attn_v=banana", "tensor_type=banana: no quantizer"},
          Bad{"mix=q4_k_m,tensor_type=(=q8_0", "--tensor-type ("},
          Bad{"mix=q4_k_m,embd_type=banana", "embd_type=banana: no quantizer"}}) {
        auto r = cktest::run_ckhost({"--pipeline", "gguf:quantize[" + b.options + "]:gguf", "-i",
                                     input, "-o", (dir / "o.gguf").string()});
        BOOST_TEST(r.exit_code == 2, b.options << ": " << r.err);
        BOOST_TEST(cktest::contains(r.err, b.message), b.options << ": " << r.err);
        BOOST_TEST(dir.entries().empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_quantize_llama
