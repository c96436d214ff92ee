// general.file_type stays true (issue 14): `inspect` names it as llama.cpp does and says when
// the tensors disagree; every transform that changes tensor types, a third-party one too,
// leaves a value llama.cpp would give the result, and quantize keeps its exact mixture.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "ck/support/little_endian.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_file_type {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using nlohmann::json;

namespace {

// `inspect --json`'s "file_type" object of `file`.
json file_type_of(const fs::path& file) {
    auto r = cktest::run_ckhost({"inspect", file.string(), "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, file << ": " << r.err);
    return json::parse(r.out)["file_type"];
}

// The value of a metadata key of `file`, or null.
json metadata_value(const fs::path& file, const std::string& key) {
    auto r = cktest::run_ckhost({"inspect", file.string(), "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    for (const json& kv : doc["metadata"])
        if (kv["key"] == key) return kv["value"];
    return nullptr;
}

// Converts `in` with `pipeline` (test plugins found too); returns the run.
cktest::RunResult convert(const std::string& pipeline, const fs::path& in, const fs::path& out) {
    return cktest::run_ckhost({"--plugin-dir", cktest::test_plugin_dir().string(), "--pipeline",
                               pipeline, "-i", in.string(), "-o", out.string()});
}

// A copy of the sample in `dir` whose general.file_type (a u32) holds `value`.
fs::path sample_with_file_type(const cktest::TempDir& dir, std::uint32_t value) {
    auto bytes = cktest::read_file(cktest::sample_model());
    const std::string key = "general.file_type";
    const auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
    BOOST_TEST_REQUIRE((at != bytes.end()));
    // The key, its value type (u32 = 4), the value.
    ck::le::store(&*(at + static_cast<std::ptrdiff_t>(key.size()) + 4), value);
    const fs::path out = dir / "patched.gguf";
    cktest::write_file(out, bytes);
    return out;
}

// The line of inspect's metadata table for `key` ("  KEY  TYPE  VALUE\n", aligned), or "".
std::string metadata_row(const std::string& out, const std::string& key) {
    const std::size_t at = out.find("\n  " + key + " ");
    if (at == std::string::npos) return {};
    return out.substr(at + 1, out.find('\n', at + 1) - at);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(file_type)

BOOST_AUTO_TEST_CASE(inspect_names_the_file_type) {
    auto r = cktest::run_ckhost({"inspect", cktest::sample_model().string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string row = metadata_row(r.out, "general.file_type");
    BOOST_TEST(contains(row, " u32  "), r.out);
    BOOST_TEST(row.ends_with("  15 (MOSTLY_Q4_K_M)\n"), r.out);
    BOOST_TEST(!contains(r.out, "but the tensors"), r.out);

    r = cktest::run_ckhost({"inspect", cktest::sample_model().string(), "--json"});
    const json doc = json::parse(r.out);
    for (const json& kv : doc["metadata"])
        if (kv["key"] == "general.file_type") {
            BOOST_TEST(kv["value"].get<int>() == 15);
            BOOST_TEST(kv["name"].get<std::string>() == "MOSTLY_Q4_K_M");
        }
    const json& ft = doc["file_type"];
    BOOST_TEST(ft["stored"].get<int>() == 15);
    BOOST_TEST(ft["name"].get<std::string>() == "MOSTLY_Q4_K_M");
    BOOST_TEST(ft["tensors_mostly"].get<std::string>() == "q4_K");
    BOOST_TEST(ft["tensors_file_type"].get<int>() == 15);
    BOOST_TEST(ft["agrees"].get<bool>());
    BOOST_TEST(ft["problem"].is_null());
}

BOOST_AUTO_TEST_CASE(inspect_says_when_the_stored_value_disagrees) {
    cktest::TempDir dir;
    const fs::path wrong = sample_with_file_type(dir, 1);
    auto r = cktest::run_ckhost({"inspect", wrong.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out,
                        "  1 (MOSTLY_F16)\n"
                        "    stored 1 (MOSTLY_F16) but the tensors are mostly q4_K "
                        "(llama.cpp's name for them: 15 (MOSTLY_Q4_K_M))\n"),
               r.out);
    BOOST_TEST(metadata_row(r.out, "general.file_type").ends_with("  1 (MOSTLY_F16)\n"), r.out);
    const json ft = file_type_of(wrong);
    BOOST_TEST(!ft["agrees"].get<bool>());
    BOOST_TEST(contains(ft["problem"].get<std::string>(), "stored 1 (MOSTLY_F16)"));

    // Q4_K_S is as fair a name for Q4_K tensors as Q4_K_M: no complaint.
    BOOST_TEST(file_type_of(sample_with_file_type(dir, 14))["agrees"].get<bool>());

    // An id llama.cpp does not know (4 was MOSTLY_Q4_1_SOME_F16, long removed).
    r = cktest::run_ckhost({"inspect", sample_with_file_type(dir, 4).string()});
    BOOST_TEST(contains(r.out,
                        "  4 (no llama.cpp name)\n"
                        "    stored 4 (no llama.cpp name) but the tensors are mostly q4_K"),
               r.out);
    BOOST_TEST(metadata_row(r.out, "general.file_type").ends_with("  4 (no llama.cpp name)\n"),
               r.out);
    BOOST_TEST(file_type_of(dir / "patched.gguf")["name"].is_null());
}

BOOST_AUTO_TEST_CASE(inspect_without_the_key_says_what_llama_cpp_would_call_it) {
    const fs::path types = cktest::test_data() / "types" / "types.gguf";
    auto r = cktest::run_ckhost({"inspect", types.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    // One tensor of every type and two of each float: the tie goes to the first in
    // llama.cpp's order, bf16.
    BOOST_TEST(contains(r.out,
                        "general.file_type is not stored; the tensors are mostly bf16 "
                        "(llama.cpp's name for them: 32 (MOSTLY_BF16))"),
               r.out);
    const json ft = file_type_of(types);
    BOOST_TEST(ft["stored"].is_null());
    BOOST_TEST(ft["agrees"].is_null());
    BOOST_TEST(ft["tensors_file_type_name"].get<std::string>() == "MOSTLY_BF16");
}

BOOST_AUTO_TEST_CASE(llama_quantizes_files_are_named,
                     *utf::precondition(cktest::SharedDataPresent())) {
    // Every file llama-quantize and convert_hf_to_gguf.py wrote: the name of its stored value,
    // and whether the tensors agree. Where they do not, llama.cpp's own value is the stale one.
    const fs::path root = *cktest::shared_data();
    const std::map<std::string, std::string> names = {
        {"f16", "MOSTLY_F16"},
        {"bf16", "MOSTLY_BF16"},
        {"f32", "ALL_F32"},
        {"q4_0", "MOSTLY_Q4_0"},
        {"q4_1", "MOSTLY_Q4_1"},
        {"q5_0", "MOSTLY_Q5_0"},
        {"q5_1", "MOSTLY_Q5_1"},
        {"q8_0", "MOSTLY_Q8_0"},
        {"q2_k", "MOSTLY_Q2_K"},
        {"q3_k_s", "MOSTLY_Q3_K_S"},
        {"q3_k_m", "MOSTLY_Q3_K_M"},
        {"q3_k_l", "MOSTLY_Q3_K_L"},
        {"q4_k_s", "MOSTLY_Q4_K_S"},
        {"q4_k_m", "MOSTLY_Q4_K_M"},
        {"q5_k_s", "MOSTLY_Q5_K_S"},
        {"q5_k_m", "MOSTLY_Q5_K_M"},
        {"q6_k", "MOSTLY_Q6_K"},
        {"iq4_nl", "MOSTLY_IQ4_NL"},
        {"tq1_0", "MOSTLY_TQ1_0"},
        {"tq2_0", "MOSTLY_TQ2_0"},
        {"q4_k_m-pure", "MOSTLY_Q4_K_M"},
        {"q4_k_m-out_q8_0-embd_q8_0", "MOSTLY_Q4_K_M"},
    };
    std::size_t checked = 0;
    for (const auto& [suffix, name] : names) {
        for (const std::string stem :
             {"quant/micro-llama-f16.", "quant/micro-odd-f16.", "quant/micro-llama-f32.",
              "quant/micro-llama-q8_0.requant.", "micro-llama-", "hf/llama-bf16."}) {
            const fs::path file = root / (stem + suffix + ".gguf");
            if (!fs::exists(file)) continue;
            ++checked;
            const json ft = file_type_of(file);
            BOOST_TEST(ft["name"].get<std::string>() == name, file);
            // micro-odd's rows fit no K type: its K mixtures are mostly fallback types.
            const bool odd_k = stem == "quant/micro-odd-f16." &&
                               (suffix.find("_k") != std::string::npos || suffix == "tq2_0");
            BOOST_TEST(ft["agrees"].get<bool>() == !odd_k, file << ": " << ft.dump());
        }
    }
    BOOST_TEST(checked >= 40u);
    // llama.cpp's own stale value: micro-odd-f16.gguf says ALL_F32 and holds F16 weights.
    const json odd = file_type_of(root / "quant" / "micro-odd-f16.gguf");
    BOOST_TEST(odd["problem"].get<std::string>() ==
               "stored 0 (ALL_F32) but the tensors are mostly f16 (llama.cpp's name for them: 1 "
               "(MOSTLY_F16))");
}

BOOST_AUTO_TEST_CASE(dequantizing_renames_the_file) {
    cktest::TempDir dir;
    struct Case {
        std::string stage;
        int file_type;
    };
    for (const Case& c : {Case{"dequant", 0}, Case{"dequant[to=f32]", 0},
                          Case{"dequant[to=f16]", 1}, Case{"dequant[to=bf16]", 32}}) {
        const fs::path out = dir / "out.gguf";
        fs::remove(out);
        auto r = convert("gguf:" + c.stage + ":gguf", cktest::sample_model(), out);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(file_type_of(out)["stored"].get<int>() == c.file_type, c.stage);
        BOOST_TEST(file_type_of(out)["agrees"].get<bool>(), c.stage);
        // Said once, naming the stage; quantization_version stays (llama.cpp writes it always).
        BOOST_TEST(
            contains(r.err, "stage '" + c.stage + "': general.file_type 15 (MOSTLY_Q4_K_M) -> "),
            r.err);
        BOOST_TEST(metadata_value(out, "general.quantization_version").get<int>() == 2);
    }
    // Only the output dequantized: still mostly Q4_K, still Q4_K_M, nothing said.
    const fs::path out = dir / "partly.gguf";
    auto r = convert("gguf:dequant[only=output.weight]:gguf", cktest::sample_model(), out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(file_type_of(out)["stored"].get<int>() == 15);
    BOOST_TEST(!contains(r.err, "general.file_type"), r.err);
    // --json lists the change with the notes.
    r = cktest::run_ckhost({"--json", "--pipeline", "gguf:dequant:gguf", "-i",
                            cktest::sample_model().string(), "-o", (dir / "j.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json notes = json::parse(r.out)["notes"];
    BOOST_TEST(std::any_of(notes.begin(), notes.end(), [](const json& n) {
        return contains(n.get<std::string>(), "-> 0 (ALL_F32): the tensors are now mostly f32");
    }));
}

BOOST_AUTO_TEST_CASE(dequantizing_a_q8_0_model, *utf::precondition(cktest::SharedDataPresent())) {
    cktest::TempDir dir;
    const fs::path q8 = *cktest::shared_data() / "micro-llama-q8_0.gguf";
    BOOST_TEST_REQUIRE(convert("gguf:dequant:gguf", q8, dir / "f32.gguf").exit_code == 0);
    BOOST_TEST(file_type_of(dir / "f32.gguf")["name"].get<std::string>() == "ALL_F32");
    BOOST_TEST_REQUIRE(convert("gguf:dequant[to=f16]:gguf", q8, dir / "f16.gguf").exit_code == 0);
    BOOST_TEST(file_type_of(dir / "f16.gguf")["name"].get<std::string>() == "MOSTLY_F16");
    // What llama.cpp's converter calls the same model as F32 and F16.
    for (const char* f : {"f32", "f16"})
        BOOST_TEST(file_type_of(dir / (std::string(f) + ".gguf"))["stored"] ==
                   file_type_of(*cktest::shared_data() /
                                ("micro-llama-" + std::string(f) + ".gguf"))["stored"]);
}

BOOST_AUTO_TEST_CASE(quantize_keeps_its_exact_mixture) {
    // The types alone cannot tell Q4_K_S from Q4_K_M, nor Q3_K_L from Q3_K_M: quantize says.
    cktest::TempDir dir;
    for (const auto& [mix, file_type] : {std::pair("q4_k_s", 14), std::pair("q4_k_m", 15),
                                         std::pair("q3_k_l", 13), std::pair("q5_k_s", 16)}) {
        const fs::path out = dir / (std::string(mix) + ".gguf");
        auto r = convert(std::string("gguf:quantize[mix=") + mix + ",requantize=1]:gguf",
                         cktest::sample_model(), out);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(file_type_of(out)["stored"].get<int>() == file_type, mix);
        BOOST_TEST(!contains(r.err, "general.file_type"), r.err);
    }
    // to=TYPE is no named mixture: llama.cpp's name for the result.
    const fs::path out = dir / "q8.gguf";
    BOOST_TEST_REQUIRE(
        convert("gguf:quantize[to=q8_0,requantize=1]:gguf", cktest::sample_model(), out)
            .exit_code == 0);
    BOOST_TEST(file_type_of(out)["name"].get<std::string>() == "MOSTLY_Q8_0");
}

BOOST_AUTO_TEST_CASE(quantizing_a_few_tensors_to_one_type,
                     *utf::precondition(cktest::SharedDataPresent())) {
    // to=q8_0 on two tensors of an F16 model leaves it mostly F16.
    cktest::TempDir dir;
    const fs::path out = dir / "o.gguf";
    auto r = convert("gguf:quantize[to=q8_0,only=blk.0.ffn_*]:gguf",
                     *cktest::shared_data() / "micro-llama-f16.gguf", out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(file_type_of(out)["name"].get<std::string>() == "MOSTLY_F16");
    // A K mixture whose rows fit no K type keeps llama-quantize's value, as llama-quantize.
    r = convert("gguf:quantize[mix=q4_k_m]:gguf",
                *cktest::shared_data() / "quant" / "micro-odd-f16.gguf", dir / "odd.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(file_type_of(dir / "odd.gguf")["stored"].get<int>() == 15);
}

BOOST_AUTO_TEST_CASE(a_third_party_transform_changing_types) {
    // testkit[retype] changes types and leaves general.file_type alone, as a plugin that
    // knows nothing of llama.cpp would: the host renames the result.
    cktest::TempDir dir;
    auto r = convert("gguf:quantize[mix=bf16,requantize=1]:testkit[retype=bf16_to_f32]:gguf",
                     cktest::sample_model(), dir / "f32.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(file_type_of(dir / "f32.gguf")["name"].get<std::string>() == "ALL_F32");
    BOOST_TEST(contains(r.err,
                        "stage 'testkit[retype=bf16_to_f32]': general.file_type 32 "
                        "(MOSTLY_BF16) -> 0 (ALL_F32)"),
               r.err);

    // To a type llama.cpp has no file type for: the key goes, with a note saying why.
    r = convert("gguf:quantize[to=q8_0,requantize=1]:testkit[retype=q8_0_to_i8]:gguf",
                cktest::sample_model(), dir / "i8.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(file_type_of(dir / "i8.gguf")["stored"].is_null());
    BOOST_TEST(file_type_of(dir / "i8.gguf")["tensors_mostly"].get<std::string>() == "i8");
    BOOST_TEST(contains(r.err,
                        "general.file_type 7 (MOSTLY_Q8_0) removed: the tensors are now "
                        "mostly i8, which llama.cpp has no file type for"),
               r.err);
    r = cktest::run_ckhost({"inspect", (dir / "i8.gguf").string()});
    BOOST_TEST(contains(r.out,
                        "general.file_type is not stored; the tensors are mostly i8, which "
                        "llama.cpp has no file type for"),
               r.out);
}

// Issue 28: verify fails a general.file_type the tensors contradict, naming the key and both
// values, and writes nothing.
BOOST_AUTO_TEST_CASE(verify_fails_a_file_type_the_tensors_contradict) {
    cktest::TempDir dir;
    const fs::path wrong = sample_with_file_type(dir, 1);  // MOSTLY_F16 over Q4_K tensors
    auto r = cktest::run_ckhost({"verify", wrong.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err,
                        "patched.gguf: key 'general.file_type': stored 1 (MOSTLY_F16) but the "
                        "tensors are mostly q4_K (llama.cpp's name for them: 15 (MOSTLY_Q4_K_M))"),
               r.err);
    BOOST_TEST(r.out.empty(), r.out);
    r = cktest::run_ckhost({"verify", "--json", wrong.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    const json error = json::parse(r.out)["error"];
    BOOST_TEST(error["subject"].get<std::string>() == "key 'general.file_type'");
    BOOST_TEST(contains(error["message"].get<std::string>(), "stored 1 (MOSTLY_F16)"));
    BOOST_TEST(dir.entries() == std::vector<std::string>{"patched.gguf"});

    // A fair name passes: Q4_K_S for Q4_K tensors. So does an id llama.cpp does not know
    // (4, long removed): it cannot be checked, inspect still says so.
    for (const std::uint32_t fair : {14u, 15u, 4u})
        BOOST_TEST(
            cktest::run_ckhost({"verify", sample_with_file_type(dir, fair).string()}).exit_code ==
                0,
            fair);
}

BOOST_AUTO_TEST_CASE(verify_on_llama_cpp_files, *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    // llama.cpp's own stale value (ALL_F32 over F16 weights) is a failure...
    auto r = cktest::run_ckhost({"verify", (root / "quant" / "micro-odd-f16.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err,
                        "key 'general.file_type': stored 0 (ALL_F32) but the tensors are "
                        "mostly f16 (llama.cpp's name for them: 1 (MOSTLY_F16))"),
               r.err);
    // ...while llama-quantize's mixtures whose rows fit no K block (mostly fallback types) keep
    // the mixture's name, as llama-quantize writes it: no failure.
    std::size_t checked = 0;
    for (const auto& entry : fs::directory_iterator(root / "quant")) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("micro-odd-f16.") || name == "micro-odd-f16.gguf") continue;
        ++checked;
        BOOST_TEST(file_type_of(entry.path())["stored"].is_number(), name);
        r = cktest::run_ckhost({"verify", entry.path().string()});
        BOOST_TEST(r.exit_code == 0, name << ": " << r.err);
    }
    BOOST_TEST(checked >= 9u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_file_type
