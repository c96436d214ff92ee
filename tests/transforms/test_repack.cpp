// The repack stage through the real binary: accuracy against the exactly dequantized source on
// llama.cpp's files, decode(encode(x)) within one code step, the report, tensor selection,
// identical output from every kernel variant, and what does not qualify passing through.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/repack.hpp"
#include "ck/plugin.hpp"
#include "ck/safetensors/reader.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_repack {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using nlohmann::json;

namespace {

fs::path sample() {
    return cktest::examples_dir() / "micro-llama-q4_k_m.gguf";
}

cktest::RunResult convert(const std::string& pipeline, const fs::path& in, const fs::path& out,
                          std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--pipeline", pipeline, "-i", in.string(), "-o", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return cktest::run_ckhost(args);
}

struct Accuracy {
    double squared_error = 0, squared_source = 0;
    float max_abs_error = 0;
    std::size_t repacked = 0, outside_one_step = 0;
    double relative_rms() const { return std::sqrt(squared_error / squared_source); }
};

// Decodes every repacked tensor of `repacked` (a safetensors file) and compares it with the
// exactly dequantized tensor of `source`; pass-through tensors must be the source's bytes.
Accuracy check_against_source(const fs::path& source, const fs::path& repacked) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader in(context);
    ck::safetensors::SafetensorsReader out(context);
    const ck::ModelHeader a = in.open(source), b = out.open(repacked);
    Accuracy acc;
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        const ck::TensorInfo& t = a.tensors[i];
        const ck::Value* format = b.metadata.find("ckhost.repack." + t.name);
        std::size_t j = 0;
        while (j < b.tensors.size() && b.tensors[j].name != t.name) ++j;
        BOOST_TEST_REQUIRE(j < b.tensors.size(), t.name);
        const auto got = out.tensor(j).bytes();
        const auto src = in.tensor(i).bytes();
        if (!format) {
            BOOST_TEST(std::equal(got.begin(), got.end(), src.begin(), src.end()),
                       t.name << " should pass through unchanged");
            continue;
        }
        ++acc.repacked;
        const bool int8 = format->str() == "int8-minmax-128";
        BOOST_TEST_REQUIRE(b.tensors[j + 1].name == t.name + (int8 ? ".minmax" : ".absmax"));
        const auto scale_bytes = out.tensor(j + 1).bytes();
        std::vector<std::uint16_t> scales(scale_bytes.size() / 2);
        ck::le::load_array(scale_bytes.data(), scales.data(), scales.size());
        std::vector<float> x(t.elements());
        ck::kernels::scalar_dequant_table().fn[t.type](src.data(), x.data(), x.size());
        for (std::size_t e = 0; e < x.size(); ++e) {
            const auto code = static_cast<std::uint8_t>(got[int8 ? e : e / 2]);
            float y, step;
            if (int8) {
                const std::uint16_t mn = scales[2 * (e / 128)], mx = scales[2 * (e / 128) + 1];
                y = ck::kernels::decode_int8(code, mn, mx);
                step = (ck::kernels::f16_to_f32(mx) - ck::kernels::f16_to_f32(mn)) / 255;
            } else {
                const std::uint8_t index = e % 2 ? code >> 4 : code & 15;
                const float a = ck::kernels::f16_to_f32(scales[e / 64]);
                y = ck::kernels::decode_nf4(index, scales[e / 64]);
                // One step: the gap to the neighbouring entry on the value's side.
                const auto& cb = ck::kernels::nf4_codebook;
                const float below = index > 0 ? cb[index] - cb[index - 1] : 0.001f;
                const float above = index < 15 ? cb[index + 1] - cb[index] : 0.001f;
                step = a * (x[e] < y ? below : above);
            }
            const float err = y - x[e];
            acc.squared_error += double(err) * err;
            acc.squared_source += double(x[e]) * x[e];
            acc.max_abs_error = std::max(acc.max_abs_error, std::fabs(err));
            if (std::fabs(err) > step * 1.0001f + 1e-12f) ++acc.outside_one_step;
        }
    }
    return acc;
}

json repack_report(const std::string& out) {
    return json::parse(out).at("reports").at("repack");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(repack_transform)

BOOST_AUTO_TEST_CASE(q8_0_to_int8_on_llama_cpp_file,
                     *utf::precondition(cktest::SharedDataPresent())) {
    cktest::TempDir dir;
    const fs::path in = *cktest::shared_data() / "micro-llama-q8_0.gguf";
    auto r = convert("gguf:repack[to=int8]:safetensors", in, dir / "o.safetensors", {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const Accuracy acc = check_against_source(in, dir / "o.safetensors");
    BOOST_TEST(acc.repacked == 16u);  // every 2-D weight
    BOOST_TEST(acc.outside_one_step == 0u);
    // docs/formats/repack-blocks.md: about 0.6% against the dequantized Q8_0 source.
    BOOST_TEST(acc.relative_rms() > 0.004);
    BOOST_TEST(acc.relative_rms() < 0.008);
    // The report says the same (its sums run in f32 per 1024 elements).
    const json report = repack_report(r.out);
    BOOST_TEST(report["totals"]["rel_rms_error"].get<double>() == acc.relative_rms(),
               boost::test_tools::tolerance(1e-4));
    BOOST_TEST(report["totals"]["max_abs_error"].get<double>() == acc.max_abs_error);
    BOOST_TEST(report["totals"]["repacked"].get<int>() == 16);
}

BOOST_AUTO_TEST_CASE(q4_0_to_nf4_on_llama_cpp_files,
                     *utf::precondition(cktest::SharedDataPresent())) {
    cktest::TempDir dir;
    for (const std::string name : {"micro-llama-q4_0.gguf", "tiny-llama-q4_0.gguf"}) {
        const fs::path in = *cktest::shared_data() / name;
        auto r = convert("gguf:repack[to=nf4]:safetensors", in, dir / "o.safetensors",
                         {"--json", "--force"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const Accuracy acc = check_against_source(in, dir / "o.safetensors");
        BOOST_TEST(acc.repacked > 0u, name);
        BOOST_TEST(acc.outside_one_step == 0u, name);
        // docs/formats/repack-blocks.md: about 9.5% against the dequantized Q4_0 source.
        BOOST_TEST(acc.relative_rms() > 0.085, name);
        BOOST_TEST(acc.relative_rms() < 0.105, name);
        BOOST_TEST(
            repack_report(r.out)["totals"]["rel_rms_error"].get<double>() == acc.relative_rms(),
            boost::test_tools::tolerance(1e-4));
    }
}

BOOST_AUTO_TEST_CASE(k_quants_of_the_sample_to_int8) {
    // Q4_K and Q6_K (examples/, always present): each super-block becomes two Int8 blocks.
    cktest::TempDir dir;
    auto r =
        convert("gguf:repack[to=int8]:safetensors", sample(), dir / "o.safetensors", {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const Accuracy acc = check_against_source(sample(), dir / "o.safetensors");
    BOOST_TEST(acc.repacked == 16u);
    BOOST_TEST(acc.outside_one_step == 0u);
    BOOST_TEST(acc.relative_rms() < 0.008);
    const json report = repack_report(r.out);
    std::set<std::string> from;
    for (const auto& t : report["tensors"]) from.insert(t["from"].get<std::string>());
    BOOST_TEST((from == std::set<std::string>{"q4_K", "q6_K"}));
}

BOOST_AUTO_TEST_CASE(report_lists_what_stays_and_why) {
    cktest::TempDir dir;
    // NF4 takes Q4_0 and floats only: a Q4_K_M model stays as it is, with one warning per type.
    auto r = convert("gguf:repack[to=nf4]:gguf", sample(), dir / "o.gguf", {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    const json report = doc["reports"]["repack"];
    BOOST_TEST(report["totals"]["repacked"].get<int>() == 0);
    BOOST_TEST(report["skipped"].size() == 21u);
    bool norm_reason = false, q4_k_reason = false;
    for (const auto& s : report["skipped"]) {
        const std::string reason = s["reason"];
        if (s["name"] == "output_norm.weight") norm_reason = contains(reason, "1-D");
        if (s["name"] == "blk.0.attn_q.weight")
            q4_k_reason = contains(reason, "no q4_K -> nf4 path");
    }
    BOOST_TEST(norm_reason);
    BOOST_TEST(q4_k_reason);
    const std::string warnings = doc["warnings"].dump();
    BOOST_TEST(contains(warnings, "13 tensors stay as they are: no q4_K -> nf4 path"), warnings);
    BOOST_TEST(contains(warnings, "3 tensors stay as they are: no q6_K -> nf4 path"), warnings);
    BOOST_TEST(!contains(warnings, "norm"), "1-D tensors are skipped silently: " << warnings);
}

BOOST_AUTO_TEST_CASE(only_and_skip_select_tensors) {
    cktest::TempDir dir;
    auto r = convert("gguf:repack[to=int8,only=blk.1.*,skip=*ffn_down*]:safetensors", sample(),
                     dir / "o.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 1, "q4_K tensors left alone cannot be stored");
    BOOST_TEST(contains(r.err, "type q4_K has no safetensors dtype"), r.err);
    BOOST_TEST(dir.entries().empty());
    // The plan shows the selection: i8 codes (u8 in the file) for exactly the selected tensors.
    r = convert("gguf:repack[to=int8,only=blk.1.*,skip=*ffn_down*]:safetensors", sample(),
                dir / "o.safetensors", {"--dry-run", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 1, "the plan fails too: q4_K has no safetensors dtype");
    r = convert(
        "gguf:repack[to=int8,only=blk.1.*,skip=*ffn_down*]:dequant[skip=*.minmax]:safetensors",
        sample(), dir / "o.safetensors", {"--dry-run", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json plan = json::parse(r.out)["plan"]["tensors"];
    std::size_t checked = 0;
    for (const auto& row : plan) {
        const std::string name = row["name"];
        if (name.ends_with(".minmax")) continue;
        const bool selected =
            name.starts_with("blk.1.") && !contains(name, "ffn_down") && !contains(name, "norm");
        BOOST_TEST((row["stages"][1]["type"] == "i8") == selected, name);
        ++checked;
    }
    BOOST_TEST(checked == 21u);
}

BOOST_AUTO_TEST_CASE(every_variant_writes_the_same_file) {
    cktest::TempDir dir;
    const fs::path f16 =
        cktest::have_shared_data() ? *cktest::shared_data() / "micro-llama-f16.gguf" : sample();
    for (const std::string to : {"int8", "nf4"}) {
        auto best = convert("gguf:repack[to=" + to + "]:safetensors", f16, dir / "best.st",
                            {"--json", "--force"});
        auto scalar = convert("gguf:repack[to=" + to + "]:safetensors", f16, dir / "scalar.st",
                              {"--json", "--force", "--isa", "scalar"});
        if (f16 == sample() && to == "nf4") continue;  // nothing to repack (and q4_K stays)
        BOOST_TEST_REQUIRE(best.exit_code == 0, best.err);
        BOOST_TEST_REQUIRE(scalar.exit_code == 0, scalar.err);
        BOOST_TEST(cktest::files_equal(dir / "best.st", dir / "scalar.st"), to);
        json a = repack_report(best.out), b = repack_report(scalar.out);
        // The variant named differs, unless this CPU runs the scalar kernels only: the repack
        // kernels' own variants are x86-64's (ARM64 repacks with scalar; docs/platforms.md).
        BOOST_TEST((a["kernels"] != b["kernels"]) ==
                   (cktest::x86_simd_built && cktest::supported_isas().size() > 1));
        a.erase("kernels");
        b.erase("kernels");
        BOOST_TEST(a == b, "the accuracy figures are bit-identical too");
    }
}

BOOST_AUTO_TEST_CASE(dry_run_shows_the_plan_and_writes_nothing) {
    cktest::TempDir dir;
    auto r =
        convert("gguf:repack[to=int8]:safetensors", sample(), dir / "o.safetensors", {"--dry-run"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "blk.0.attn_q.weight: gguf q4_K"), r.out);
    BOOST_TEST(contains(r.out, "repack i8"), r.out);
    BOOST_TEST(contains(r.out, "blk.0.attn_q.weight.minmax"), r.out);
    BOOST_TEST(dir.entries().empty());
}

BOOST_AUTO_TEST_CASE(sizes_that_do_not_fit_the_blocks_pass_through) {
    // 2-D F32 tensors of 192 elements (rows of 64) and 96 elements (rows of 3 x 32): Int8 needs
    // a multiple of 128, NF4 a multiple of 64 and an even row length.
    cktest::TempDir dir;
    ck::ModelHeader h;
    h.format = "test";
    auto add = [&](const std::string& name, std::vector<std::int64_t> ne) {
        ck::TensorInfo t;
        t.name = name;
        t.type = 0;
        t.ne = std::move(ne);
        t.nbytes = *ck::tensor_bytes(0, t.ne);
        h.tensors.push_back(t);
    };
    add("a.weight", {64, 3});
    add("b.weight", {32, 3});
    add("c.weight", {128, 2});
    {
        ck::RecordingContext context;
        ckplugin::gguf::GgufWriter writer(context);
        writer.prepare(h, dir / "in.gguf");
        ck::OutputSet out(false);
        writer.begin(out);
        for (std::size_t i = 0; i < h.tensors.size(); ++i) {
            std::vector<std::byte> bytes(h.tensors[i].nbytes);
            for (std::size_t k = 0; k < bytes.size() / 4; ++k) {
                ck::le::store(bytes.data() + 4 * k, std::sin(float(k)) * 0.1f);
            }
            writer.write(i, ck::TensorView::owning(std::move(bytes)));
        }
        writer.finish();
        out.commit();
    }
    auto r = convert("gguf:repack[to=int8]:safetensors", dir / "in.gguf", dir / "i.st", {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    json report = repack_report(r.out);
    BOOST_TEST(report["totals"]["repacked"].get<int>() == 1);  // c.weight
    BOOST_TEST(contains(json::parse(r.out)["warnings"].dump(),
                        "2 tensors stay as they are: int8 needs a multiple of 128 elements"));
    r = convert("gguf:repack[to=nf4]:safetensors", dir / "in.gguf", dir / "n.st", {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    report = repack_report(r.out);
    BOOST_TEST(report["totals"]["repacked"].get<int>() == 2);  // a.weight, c.weight
    BOOST_TEST(report["skipped"][0]["name"] == "b.weight");
}

BOOST_AUTO_TEST_CASE(a_repacked_file_is_not_repacked_again) {
    cktest::TempDir dir;
    auto r = convert("gguf:repack[to=int8]:safetensors", sample(), dir / "a.st");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    // The F16 scales (2-D, 2 x L/128) would otherwise qualify for Int8 themselves.
    r = convert("safetensors:repack[to=int8]:safetensors", dir / "a.st", dir / "b.st", {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(repack_report(r.out)["totals"]["repacked"].get<int>() == 0);
    BOOST_TEST(cktest::files_equal(dir / "a.st", dir / "b.st"));
}

BOOST_AUTO_TEST_CASE(broken_input_is_refused_and_leaves_nothing) {
    cktest::TempDir dir;
    auto r = convert("gguf:repack[to=int8]:safetensors",
                     cktest::test_data() / "bad" / "trunc_mid_tensor_data.gguf", dir / "o.st");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "tensor 1 'b'"), r.err);
    BOOST_TEST(dir.entries().empty());
    r = convert("gguf:repack[to=fp4]:safetensors", sample(), dir / "o.st");
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "choices: int8|nf4"), r.err);
}

BOOST_AUTO_TEST_CASE(plugin_reports_its_kernel_variant) {
    auto r = cktest::run_ckhost({"plugins", "--isa", "scalar"});
    BOOST_TEST(contains(r.out, "repack  (transform)  version 1.0.0  ABI " +
                                   std::to_string(CK_PLUGIN_ABI_VERSION) + "  kernels: scalar"),
               r.out);
    r = cktest::run_ckhost({"plugins"});
    // Repack has AVX2 and AVX-512 variants only: on ARM64 its kernels are scalar under --isa neon.
    const std::string best(cktest::x86_simd_built
                               ? ck::isa_name(ck::best_supported_isa(ck::cpu_features()))
                               : "scalar");
    BOOST_TEST(contains(r.out, "repack  (transform)  version 1.0.0  ABI " +
                                   std::to_string(CK_PLUGIN_ABI_VERSION) + "  kernels: " + best),
               r.out);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_repack
