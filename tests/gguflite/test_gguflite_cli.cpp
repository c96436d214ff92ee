// The gguflite plugin through the real binary: the pipelines gguf:gguflite, gguflite:gguf and
// gguflite:gguflite, inspect and verify, the writer options and their errors, the fallbacks
// and the report.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/plugin.hpp"
#include "gguf_reader.hpp"
#include "gguflite_reader.hpp"
#include "gguflite_test_files.hpp"
#include "inspect_output.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguflite_cli {

namespace fs = std::filesystem;
using ckplugin::gguflite::Dtype;
using cktest::contains;

namespace {

// A schemes file giving the sample all four dtypes.
fs::path mixed_schemes(const cktest::TempDir& dir) {
    const fs::path path = dir / "schemes.json";
    std::ofstream(path) << R"({"output.weight": "f32", "blk.*.attn_q.weight": "q8",
                               "*ffn_down*": "f16", "blk.1.*": "q8"})";
    return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguflite_cli)

BOOST_AUTO_TEST_CASE(plugin_is_listed_with_its_options) {
    auto r = cktest::run_ckhost({"plugins"});
    BOOST_TEST(contains(r.out, "gguflite  (reader, writer)  version 1.0.0  ABI " +
                                   std::to_string(CK_PLUGIN_ABI_VERSION) + "  kernels: "),
               r.out);
    BOOST_TEST(contains(r.out, "option scheme=q8|q4|f16|f32 (default q4)"), r.out);
    BOOST_TEST(contains(r.out, "option keep=f32|f16 (default f32)"), r.out);
    BOOST_TEST(contains(r.out, "option schemes"), r.out);
    BOOST_TEST(contains(r.out, "option report"), r.out);
    r = cktest::run_ckhost({"plugins", "--isa", "scalar"});
    BOOST_TEST(contains(r.out, "gguflite  (reader, writer)  version 1.0.0  ABI " +
                                   std::to_string(CK_PLUGIN_ABI_VERSION) + "  kernels: scalar"),
               r.out);
}

BOOST_AUTO_TEST_CASE(schemes_file_picks_dtypes_exact_names_first) {
    cktest::TempDir dir;
    auto r = gltest::convert("gguf:gguflite[schemes=" + mixed_schemes(dir).string() + "]",
                             gltest::sample(), dir / "m.gguflite");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguflite::GgufLiteReader reader(context);
    reader.open(dir / "m.gguflite");
    for (const auto& t : reader.stored()) {
        Dtype expected = Dtype::q4;  // scheme= default
        if (t.dims.size() == 1)
            expected = Dtype::f32;
        else if (t.name == "output.weight")
            expected = Dtype::f32;
        else if (t.name.find("attn_q") != std::string::npos)
            expected = Dtype::q8;
        else if (t.name.find("ffn_down") != std::string::npos)
            expected = Dtype::f16;
        else if (t.name.starts_with("blk.1."))
            expected = Dtype::q8;
        BOOST_TEST((t.dtype == expected), t.name);
    }
}

BOOST_AUTO_TEST_CASE(gguflite_to_gguf_keeps_floats_and_dequantizes_q8_q4) {
    cktest::TempDir dir;
    auto r = gltest::convert("gguf:gguflite[keep=f16,schemes=" + mixed_schemes(dir).string() + "]",
                             gltest::sample(), dir / "m.gguflite");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = gltest::convert("gguflite:gguf", dir / "m.gguflite", dir / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);

    ck::RecordingContext context;
    ckplugin::gguflite::GgufLiteReader lite(context);
    ckplugin::gguf::GgufReader gguf(context);
    const ck::ModelHeader a = lite.open(dir / "m.gguflite"), b = gguf.open(dir / "m.gguf");
    BOOST_TEST_REQUIRE(a.tensors.size() == b.tensors.size());
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        const Dtype d = lite.stored()[i].dtype;
        const auto& t = b.tensors[i];
        BOOST_TEST(t.type == (d == Dtype::f16 ? 1u : 0u), t.name);  // F16 stays F16
        if (d == Dtype::f16 && t.ne.size() == 1) BOOST_TEST_MESSAGE(t.name << " kept as F16");
        // F32/F16: the stored bytes; Q8/Q4: the reader's dequantized values.
        const ck::TensorView decoded = lite.tensor(i);  // keeps the dequantized values alive
        const auto expected = is_quantized(d) ? decoded.bytes() : lite.stored_bytes(i);
        const ck::TensorView converted = gguf.tensor(i);
        const auto got = converted.bytes();
        BOOST_TEST(std::equal(got.begin(), got.end(), expected.begin(), expected.end()), t.name);
        std::vector<std::int64_t> ne(lite.stored()[i].dims.rbegin(), lite.stored()[i].dims.rend());
        BOOST_TEST(t.ne == ne, t.name);  // PyTorch dims reversed back into ggml's ne
    }
    // keep=f16: the 1-D norms are F16.
    BOOST_TEST((lite.stored()[1].dtype == Dtype::f16));
}

BOOST_AUTO_TEST_CASE(gguflite_to_gguflite_reproduces_the_file) {
    for (const std::string scheme : {"q4", "q8"}) {
        cktest::TempDir dir;
        auto r = gltest::convert("gguf:gguflite[scheme=" + scheme + "]", gltest::sample(),
                                 dir / "a.gguflite");
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        // The reader gives the writer the dequantized values; quantizing them again with the
        // same scheme gives the same bytes (the quantizers are idempotent on their output).
        r = gltest::convert("gguflite:gguflite[scheme=" + scheme + ",report]", dir / "a.gguflite",
                            dir / "b.gguflite");
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(cktest::files_equal(dir / "a.gguflite", dir / "b.gguflite"), scheme);
        BOOST_TEST(contains(r.err, "read back and compared: OK"), r.err);
    }
}

BOOST_AUTO_TEST_CASE(every_kernel_variant_writes_the_same_file) {
    cktest::TempDir dir;
    for (const std::string scheme : {"q4", "q8"}) {
        const std::string pipeline = "gguf:gguflite[scheme=" + scheme + "]";
        auto best = gltest::convert(pipeline, gltest::sample(), dir / "best.gguflite", {"--force"});
        auto scalar = gltest::convert(pipeline, gltest::sample(), dir / "scalar.gguflite",
                                      {"--force", "--isa", "scalar"});
        BOOST_TEST_REQUIRE(best.exit_code == 0, best.err);
        BOOST_TEST_REQUIRE(scalar.exit_code == 0, scalar.err);
        BOOST_TEST(cktest::files_equal(dir / "best.gguflite", dir / "scalar.gguflite"), scheme);
    }
}

BOOST_AUTO_TEST_CASE(inspect_and_verify_pick_the_gguflite_reader) {
    cktest::TempDir dir;
    auto r = gltest::convert("gguf:gguflite", gltest::sample(), dir / "m.gguflite");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string file = (dir / "m.gguflite").string();
    auto text = cktest::run_ckhost({"inspect", file, "--tensors"});
    BOOST_TEST_REQUIRE(text.exit_code == 0, text.err);
    BOOST_TEST(contains(text.out, file + ": gguflite"), text.out);
    BOOST_TEST(contains(text.out, "stored Q4_per_group_64 tensors: 16\n"), text.out);
    BOOST_TEST(contains(text.out, "stored F32 tensors: 5\n"), text.out);
    BOOST_TEST(contains(text.out, "read as f32 (dequantized): Q4_per_group_64\n"), text.out);
    BOOST_TEST(contains(cktest::squeezed(text.out), "  arr[str]  1,024 items [\"<unk>\", \"<s>\""),
               text.out);
    // GGUF-lite states shapes outermost first, and inspect shows them so.
    // Each tensor under its stored dtype and bytes (the spec: rows x cols/64 f16 scales, then
    // rows x cols/2 bytes), with what it is read as.
    const std::uint64_t q4_bytes = 1024 * 256 / 64 * 2 + 1024 * 256 / 2;
    BOOST_TEST(contains(cktest::squeezed(text.out),
                        "  token_embd.weight  Q4_per_group_64  [1024, 256]  262,144  " +
                            std::to_string(q4_bytes) + "  15649  f32, 1048576 bytes\n"),
               text.out);

    auto json = cktest::run_ckhost({"inspect", file, "--json"});
    auto doc = nlohmann::json::parse(json.out);
    BOOST_TEST(doc["format"].get<std::string>() == "gguflite");
    BOOST_TEST(doc["tensor_count"].get<int>() == 21);

    auto kv = cktest::run_ckhost({"inspect", file, "--kv", "tokenizer.ggml.tokens"});
    BOOST_TEST(std::count(kv.out.begin(), kv.out.end(), '\n') == 1024);

    auto verify = cktest::run_ckhost({"verify", file});
    BOOST_TEST(verify.exit_code == 0, verify.err);
    BOOST_TEST(contains(verify.out, "OK (gguflite, 21 tensors)"), verify.out);
    BOOST_TEST(verify.err.empty(), verify.err);  // the file is what its quantizer produces
}

BOOST_AUTO_TEST_CASE(verify_warns_about_non_canonical_quantization) {
    // A Q8 row whose values do not reach +-127: valid, but quantizing its values again would
    // change the bytes.
    cktest::TempDir dir;
    gltest::FileBuilder b;
    b.data = {0x00, 0x3c, 1, 2, 3};  // scale 1.0, q = 1 2 3
    b.tensors.push_back({"w", {1, 3}, 2, 0});
    cktest::write_file(dir / "w.gguflite", b.bytes());
    auto r = cktest::run_ckhost({"verify", (dir / "w.gguflite").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "tensor 0 'w': 1 of 1 rows"), r.err);
    BOOST_TEST(contains(r.err, "gguflite:gguflite conversion would change them"), r.err);
}

BOOST_AUTO_TEST_CASE(fallbacks_are_reported) {
    // metadata.gguf: 1-D tensors, 2-D ones whose inner dim is not a multiple of 64, 3-D and 4-D
    // ones, and integer tensors.
    cktest::TempDir dir;
    auto r = gltest::convert("gguf:gguflite[scheme=q4,keep=f16]",
                             cktest::test_data() / "meta" / "metadata.gguf", dir / "m.gguflite",
                             {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto doc = nlohmann::json::parse(r.out);
    std::map<std::string, nlohmann::json> fallback;
    for (const auto& f : doc["reports"]["gguflite.fallbacks"]) fallback[f["tensor"]] = f;
    BOOST_TEST(fallback["t.f32_4x3"]["reason"].get<std::string>() ==
               "inner dim 4 is not a multiple of 64");
    BOOST_TEST(fallback["t.f32_4x3"]["stored"].get<std::string>() == "F16");
    BOOST_TEST(contains(fallback["t.f32_2x3x4"]["reason"].get<std::string>(), "3-D"));
    BOOST_TEST(contains(fallback["t.f32_6x1"]["reason"].get<std::string>(), "1-D"));
    BOOST_TEST(fallback["t.i32_3x1x2"]["stored"].get<std::string>() == "F32");  // not a weight
    BOOST_TEST(contains(fallback["t.i32_3x1x2"]["reason"].get<std::string>(), "not a float"));
    BOOST_TEST(fallback.count("t.q8_0_64x2") == 0u);  // 64 columns: takes q4
    BOOST_TEST(contains(r.err, "could not take the scheme"), r.err);
    BOOST_TEST(contains(r.err, "values of type i64 are not exact in F32"), r.err);
}

BOOST_AUTO_TEST_CASE(bad_options_are_usage_errors) {
    cktest::TempDir dir;
    const fs::path out = dir / "o.gguflite";
    auto r = gltest::convert("gguf:gguflite[scheme=q5]", gltest::sample(), out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "did you mean"), r.err);
    r = gltest::convert("gguf:gguflite[keep=q8]", gltest::sample(), out);
    BOOST_TEST(r.exit_code == 2);
    r = gltest::convert("gguf:gguflite[schemes=" + (dir / "absent.json").string() + "]",
                        gltest::sample(), out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "cannot read"), r.err);
    std::ofstream(dir / "bad.json") << R"({"token_embd.weight": "q3"})";
    r = gltest::convert("gguf:gguflite[schemes=" + (dir / "bad.json").string() + "]",
                        gltest::sample(), out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "expected one of q8, q4, f16, f32"), r.err);
    std::ofstream(dir / "broken.json") << "{";
    r = gltest::convert("gguf:gguflite[schemes=" + (dir / "broken.json").string() + "]",
                        gltest::sample(), out);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "not valid JSON"), r.err);
    BOOST_TEST(!fs::exists(out));
}

BOOST_AUTO_TEST_CASE(unused_schemes_rules_are_warned_about) {
    cktest::TempDir dir;
    std::ofstream(dir / "s.json") << R"({"blk.*.atn_q.weight": "q8"})";
    auto r = gltest::convert("gguf:gguflite[schemes=" + (dir / "s.json").string() + "]",
                             gltest::sample(), dir / "o.gguflite");
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(
        contains(r.err, "'blk.*.atn_q.weight' matches no tensor; closest: 'blk.0.attn_q.weight'"),
        r.err);
    // The same globs as only=/skip=: brace alternatives work.
    std::ofstream(dir / "b.json") << R"({"blk.{0,1}.attn_{q,k}.weight": "q8"})";
    r = gltest::convert("gguf:gguflite[schemes=" + (dir / "b.json").string() + "]",
                        gltest::sample(), dir / "b.gguflite");
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(!contains(r.err, "matches no tensor"), r.err);
}

BOOST_AUTO_TEST_CASE(dry_run_reports_sizes_and_writes_nothing) {
    cktest::TempDir dir;
    auto r =
        gltest::convert("gguf:gguflite", gltest::sample(), dir / "out/", {"--dry-run", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["outputs"][0].get<std::string>() ==
               (dir / "out" / "micro-llama-q4_k_m.gguflite").string());
    BOOST_TEST(
        doc["reports"]["gguflite.sizes"]["by_dtype"]["Q4_per_group_64"]["tensors"].get<int>() ==
        16);
    BOOST_TEST(doc["reports"]["gguflite.fallbacks"].size() == 5u);  // the five norms
    BOOST_TEST(dir.entries().empty());
}

BOOST_AUTO_TEST_CASE(types_without_a_dequantizer_are_refused) {
    cktest::TempDir dir;
    auto r =
        gltest::convert("gguf:gguflite", cktest::test_data() / "bad" / "tensor_type_9_q8_1.gguf",
                        dir / "o.gguflite");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "tensor 'q'"), r.err);
    BOOST_TEST(contains(r.err, "no dequantizer"), r.err);
    BOOST_TEST(dir.entries().empty());
}

namespace {

nlohmann::json inspect_json(const fs::path& file, bool tensors = false) {
    std::vector<std::string> args = {"inspect", file.string(), "--json"};
    if (tensors) args.push_back("--tensors");
    const auto r = cktest::run_ckhost(args);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out);
}

// A GGUF-lite file of another writer: one Q4 tensor (read as F32) whose general.file_type
// still says MOSTLY_F16, as ckhost's own writer kept it before issue 28.
fs::path file_with_a_false_file_type(const cktest::TempDir& dir) {
    gltest::FileBuilder b;
    b.metadata = "general.architecture=str:\"llama\"\ngeneral.file_type=u32:1\n";
    b.data = {0x00, 0x3c};                      // the group's f16 scale, 1.0
    b.data.resize(2 + 32, 0x21);                // 64 values of 1, two a byte
    b.tensors.push_back({"w", {1, 64}, 3, 0});  // dtype 3: Q4_per_group_64
    cktest::write_file(dir / "false.gguflite", b.bytes());
    return dir / "false.gguflite";
}

}  // namespace

// Issue 28: general.file_type names the types the file's tensors are read as, both ways.
BOOST_AUTO_TEST_CASE(general_file_type_stays_true_both_ways) {
    cktest::TempDir dir;
    // llama.h: LLAMA_FTYPE_ALL_F32 = 0, LLAMA_FTYPE_MOSTLY_F16 = 1. The sample is Q4_K_M (15).
    for (const auto& [scheme, file_type] :
         {std::pair("q4", 0), std::pair("q8", 0), std::pair("f32", 0), std::pair("f16", 1)}) {
        const fs::path lite = dir / (std::string(scheme) + ".gguflite");
        auto r = gltest::convert(std::string("gguf:gguflite[scheme=") + scheme + "]",
                                 gltest::sample(), lite);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(contains(r.err, "gguflite: general.file_type 15 (MOSTLY_Q4_K_M) -> " +
                                       std::to_string(file_type)),
                   r.err);
        nlohmann::json ft = inspect_json(lite)["file_type"];
        BOOST_TEST(ft["stored"].get<int>() == file_type, scheme);
        BOOST_TEST(ft["agrees"].get<bool>(), scheme << ": " << ft.dump());
        BOOST_TEST(cktest::run_ckhost({"verify", lite.string()}).exit_code == 0, scheme);

        const fs::path back = dir / (std::string(scheme) + ".gguf");
        r = gltest::convert("gguflite:gguf", lite, back);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        ft = inspect_json(back)["file_type"];
        BOOST_TEST(ft["stored"].get<int>() == file_type, scheme);
        BOOST_TEST(ft["agrees"].get<bool>(), scheme << ": " << ft.dump());
        BOOST_TEST(cktest::run_ckhost({"verify", back.string()}).exit_code == 0, scheme);
    }
}

BOOST_AUTO_TEST_CASE(verify_fails_a_false_file_type_and_a_conversion_corrects_it) {
    cktest::TempDir dir;
    const fs::path lite = file_with_a_false_file_type(dir);
    auto r = cktest::run_ckhost({"verify", lite.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err,
                        "key 'general.file_type': stored 1 (MOSTLY_F16) but the tensors "
                        "are mostly f32 (llama.cpp's name for them: 0 (ALL_F32))"),
               r.err);
    BOOST_TEST(r.out.empty(), r.out);
    r = cktest::run_ckhost({"verify", lite.string(), "--json"});
    BOOST_TEST(r.exit_code == 1, r.err);
    const auto error = nlohmann::json::parse(r.out)["error"];
    BOOST_TEST(error["subject"].get<std::string>() == "key 'general.file_type'");
    BOOST_TEST(error["kind"].get<std::string>() == "input");
    // inspect shows the file as it is and says what is wrong; verify wrote nothing.
    BOOST_TEST(inspect_json(lite)["file_type"]["agrees"].get<bool>() == false);
    BOOST_TEST(dir.entries() == std::vector<std::string>{"false.gguflite"});

    // Converting it names the types handed out.
    r = gltest::convert("gguflite:gguf", lite, dir / "back.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err,
                        "reader 'gguflite': general.file_type 1 (MOSTLY_F16) -> 0 "
                        "(ALL_F32): the file stores Q4_per_group_64 and is read as "
                        "mostly f32"),
               r.err);
    BOOST_TEST(inspect_json(dir / "back.gguf")["file_type"]["stored"].get<int>() == 0);
    BOOST_TEST(cktest::run_ckhost({"verify", (dir / "back.gguf").string()}).exit_code == 0);
}

// Issue 28: inspect shows each tensor's stored dtype and bytes, not the F32 it is read as.
BOOST_AUTO_TEST_CASE(inspect_shows_the_stored_dtypes_and_bytes) {
    cktest::TempDir dir;
    const fs::path lite = dir / "m.gguflite";
    auto r = gltest::convert("gguf:gguflite[schemes=" + mixed_schemes(dir).string() + "]",
                             gltest::sample(), lite);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const nlohmann::json doc = inspect_json(lite, true);
    ck::RecordingContext context;
    ckplugin::gguflite::GgufLiteReader reader(context);
    reader.open(lite);
    std::uint64_t stored_total = 0;
    for (std::size_t i = 0; i < reader.stored().size(); ++i) {
        const auto& t = reader.stored()[i];
        const nlohmann::json& shown = doc["tensors"][i];
        // The spec's sizes: Q8 rows f16 scales + rows x cols; Q4 as above; F16/F32 2 or 4 bytes.
        const std::uint64_t rows = t.dims.size() == 2 ? t.dims[0] : 1;
        const std::uint64_t values = t.dims.size() == 2 ? rows * t.dims[1] : t.dims[0];
        const std::uint64_t bytes = t.dtype == Dtype::q8    ? rows * 2 + values
                                    : t.dtype == Dtype::q4  ? values / 64 * 2 + values / 2
                                    : t.dtype == Dtype::f16 ? values * 2
                                                            : values * 4;
        stored_total += bytes;
        BOOST_TEST(shown["bytes"].get<std::uint64_t>() == values * (t.dtype == Dtype::f16 ? 2 : 4));
        if (!is_quantized(t.dtype)) {
            BOOST_TEST(!shown.contains("stored_type"), t.name);
            continue;
        }
        BOOST_TEST(shown["stored_type"].get<std::string>() ==
                       (t.dtype == Dtype::q8 ? "Q8_per_channel" : "Q4_per_group_64"),
                   t.name);
        BOOST_TEST(shown["stored_bytes"].get<std::uint64_t>() == bytes, t.name);
    }
    BOOST_TEST(doc["stored_tensor_bytes"].get<std::uint64_t>() == stored_total);
    // The text: bytes per stored dtype, and the whole as stored and as read.
    r = cktest::run_ckhost({"inspect", lite.string()});
    BOOST_TEST(contains(r.out, "tensors: 21, 2,098,432 parameters (2.10 M), "), r.out);
    BOOST_TEST(contains(r.out, " MiB stored, 7.3 MiB as read\n"), r.out);  // F16 read as F16
    BOOST_TEST(contains(cktest::squeezed(r.out), "\n  Q8_per_channel  "), r.out);
    BOOST_TEST(contains(cktest::squeezed(r.out), "\n  Q4_per_group_64  "), r.out);
    BOOST_TEST(!contains(r.out, "8.0 MiB\n"), r.out);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguflite_cli
