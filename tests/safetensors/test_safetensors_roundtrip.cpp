// safetensors reader and writer: the header as the format wants it (aligned data, PyTorch
// shapes, packed offsets, GGUF metadata with its types), exact round trips through GGUF and
// through safetensors itself, repacked pairs, inspect and verify.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "ck/safetensors/reader.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_writer.hpp"
#include "inspect_output.hpp"
#include "safetensors_writer.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_safetensors_roundtrip {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using json = nlohmann::ordered_json;

namespace {

cktest::RunResult convert(const std::string& pipeline, const fs::path& in, const fs::path& out) {
    return cktest::run_ckhost({"--pipeline", pipeline, "-i", in.string(), "-o", out.string()});
}

// The header of a safetensors file: its length field, the JSON, and where the data starts.
struct Header {
    std::uint64_t length = 0;
    json value;
};

Header read_header(const fs::path& file) {
    const auto bytes = cktest::read_file(file);
    Header h;
    h.length = ck::le::load<std::uint64_t>(bytes.data());
    h.value = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(h.length));
    return h;
}

// A small GGUF with every plain tensor type and every kind of metadata value, written with the
// project's GGUF writer (so gguf -> safetensors -> gguf must give back the same bytes).
void write_float_model(const fs::path& path) {
    ck::ModelHeader h;
    h.format = "gguf";  // as if read from a GGUF: the writer adds nothing
    auto& m = h.metadata;
    m.set("general.architecture", ck::Value::of_string("llama"));
    m.set("general.name", ck::Value::of_string("ünïcode \"quoted\" \\ tab\t nl\n ctl\x01 ✓"));
    m.set("test.u8", ck::Value::scalar(ck::ValueType::u8, 255));
    m.set("test.i8", ck::Value::scalar(ck::ValueType::i8, 0x80));  // -128
    m.set("test.u16", ck::Value::scalar(ck::ValueType::u16, 65535));
    m.set("test.i16", ck::Value::scalar(ck::ValueType::i16, 0x8000));
    m.set("test.u32", ck::Value::of_u32(4000000000u));
    m.set("test.i32", ck::Value::of_i32(-7));
    m.set("test.u64", ck::Value::of_u64(18446744073709551615ull));
    m.set("test.i64", ck::Value::scalar(ck::ValueType::i64, 0x8000000000000000ull));
    m.set("test.f32", ck::Value::of_f32(1e-5f));
    m.set("test.f32_negative_zero", ck::Value::of_f32(-0.0f));
    m.set("test.f32_nan_payload", ck::Value::scalar(ck::ValueType::f32, 0x7fc00123));
    m.set("test.f32_infinity", ck::Value::of_f32(-std::numeric_limits<float>::infinity()));
    m.set("test.f64", ck::Value::of_f64(0.1));
    m.set("test.f64_denormal", ck::Value::of_f64(4.9e-324));
    m.set("test.bool", ck::Value::of_bool(true));
    const std::string strings[] = {"<unk>", "", "▁the", "\"", "a\\b"};
    m.set("test.strings", ck::Value::of_array(ck::ArrayValue::of_strings(strings)));
    const float floats[] = {0.5f, -1.25f, 3e38f, std::numeric_limits<float>::quiet_NaN()};
    m.set("test.floats",
          ck::Value::of_array(ck::ArrayValue::of<float>(ck::ValueType::f32, floats)));
    const std::int64_t longs[] = {-1, 9007199254740993};
    m.set("test.longs",
          ck::Value::of_array(ck::ArrayValue::of<std::int64_t>(ck::ValueType::i64, longs)));
    m.set("test.empty", ck::Value::of_array(ck::ArrayValue::of_raw(ck::ValueType::u16, 0, {})));
    auto add = [&](const std::string& name, std::uint32_t type, std::vector<std::int64_t> ne) {
        ck::TensorInfo t;
        t.name = name;
        t.type = type;
        t.ne = std::move(ne);
        t.nbytes = *ck::tensor_bytes(type, t.ne);
        h.tensors.push_back(t);
    };
    add("f32.weight", 0, {8, 3});
    add("f16.weight", 1, {5, 2, 3});
    add("bf16.weight", 30, {7});
    add("i8", 24, {3});  // odd sizes: the data is packed without padding
    add("i16", 25, {2, 2});
    add("i32", 26, {1});
    add("i64", 27, {2});
    add("f64", 28, {3});
    ck::RecordingContext context;
    ckplugin::gguf::GgufWriter writer(context);
    writer.prepare(h, path);
    ck::OutputSet out(false);
    writer.begin(out);
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        std::vector<std::byte> bytes(h.tensors[i].nbytes);
        for (std::size_t k = 0; k < bytes.size(); ++k) bytes[k] = std::byte(k * 37 + i);
        writer.write(i, ck::TensorView::owning(std::move(bytes)));
    }
    writer.finish();
    out.commit();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(safetensors_roundtrip)

BOOST_AUTO_TEST_CASE(header_follows_the_format) {
    cktest::TempDir dir;
    write_float_model(dir / "m.gguf");
    auto r = convert("gguf:safetensors", dir / "m.gguf", dir / "m.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const Header h = read_header(dir / "m.safetensors");
    BOOST_TEST((8 + h.length) % 8 == 0, "the data starts 8-byte aligned");
    const json& t = h.value;
    // PyTorch order: ne [5, 2, 3] is shape [3, 2, 5].
    BOOST_TEST(t["f16.weight"]["shape"] == json({3, 2, 5}));
    BOOST_TEST(t["f16.weight"]["dtype"] == "F16");
    BOOST_TEST(t["f32.weight"]["shape"] == json({3, 8}));
    for (const auto& [name, dtype] : std::map<std::string, std::string>{{"bf16.weight", "BF16"},
                                                                        {"i8", "I8"},
                                                                        {"i16", "I16"},
                                                                        {"i32", "I32"},
                                                                        {"i64", "I64"},
                                                                        {"f64", "F64"}})
        BOOST_TEST(t[name]["dtype"] == dtype, name);
    // Offsets are packed from 0 to the end of the file, in header order.
    std::uint64_t offset = 0;
    for (const auto& [name, entry] : t.items()) {
        if (name == "__metadata__") continue;
        BOOST_TEST(entry["data_offsets"][0].get<std::uint64_t>() == offset, name);
        offset = entry["data_offsets"][1].get<std::uint64_t>();
    }
    BOOST_TEST(8 + h.length + offset == fs::file_size(dir / "m.safetensors"));
    // __metadata__: our tag, GGUF values as JSON texts, their types.
    const json& meta = t["__metadata__"];
    BOOST_TEST(meta["format"] == "ckhost");
    BOOST_TEST(meta["gguf.general.architecture"] == "\"llama\"");
    BOOST_TEST(meta["gguf.test.u32"] == "4000000000");
    BOOST_TEST(meta["gguf.test.f32"] == "1e-05");
    BOOST_TEST(meta["gguf.test.f32_nan_payload"] == "\"0x7fc00123\"");
    BOOST_TEST(meta["gguf.test.strings"] == R"(["<unk>","","▁the","\"","a\\b"])");
    const json types = json::parse(meta["ckhost.gguf_types"].get<std::string>());
    BOOST_TEST(types["test.u32"] == "u32");
    BOOST_TEST(types["test.strings"] == "arr[str]");
    BOOST_TEST(types["test.longs"] == "arr[i64]");
}

BOOST_AUTO_TEST_CASE(gguf_to_safetensors_and_back_is_exact) {
    cktest::TempDir dir;
    write_float_model(dir / "m.gguf");
    auto r = convert("gguf:safetensors", dir / "m.gguf", dir / "m.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = convert("safetensors:gguf", dir / "m.safetensors", dir / "back.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    // Every metadata value with its type (NaN payload, -0, u64 max included), every tensor.
    BOOST_TEST(cktest::files_equal(dir / "m.gguf", dir / "back.gguf"));
    // safetensors -> safetensors changes nothing either.
    r = convert("safetensors:safetensors", dir / "m.safetensors", dir / "again.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(dir / "m.safetensors", dir / "again.safetensors"));
}

BOOST_AUTO_TEST_CASE(llama_cpp_float_models_round_trip,
                     *utf::precondition(cktest::SharedDataPresent())) {
    cktest::TempDir dir;
    for (const std::string name : {"micro-llama-f32", "micro-llama-f16"}) {
        const fs::path in = *cktest::shared_data() / (name + ".gguf");
        auto r = convert("gguf:safetensors", in, dir / "m.safetensors");
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        r = convert("safetensors:gguf", dir / "m.safetensors", dir / "back.gguf");
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(cktest::files_equal(in, dir / "back.gguf"), name);
        fs::remove(dir / "m.safetensors");
        fs::remove(dir / "back.gguf");
    }
}

BOOST_AUTO_TEST_CASE(repacked_pairs_are_stored_as_the_spec_says) {
    cktest::TempDir dir;
    const fs::path in = cktest::examples_dir() / "micro-llama-q4_k_m.gguf";
    auto r = convert("gguf:repack[to=int8]:safetensors", in, dir / "int8.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    json t = read_header(dir / "int8.safetensors").value;
    // blk.0.ffn_down.weight: ne [768, 256] -> M 256 rows of K 768; L = 196608.
    BOOST_TEST(t["blk.0.ffn_down.weight"]["dtype"] == "U8");
    BOOST_TEST(t["blk.0.ffn_down.weight"]["shape"] == json({256, 768}));
    BOOST_TEST(t["blk.0.ffn_down.weight.minmax"]["dtype"] == "F16");
    BOOST_TEST(t["blk.0.ffn_down.weight.minmax"]["shape"] == json({196608 / 128, 2}));
    BOOST_TEST(t["__metadata__"]["blk.0.ffn_down.weight"] == "int8-minmax-128");
    BOOST_TEST(t["output_norm.weight"]["dtype"] == "F32");
    BOOST_TEST(!t["__metadata__"].contains("output_norm.weight"));

    // NF4 from floats (Q4_K has no NF4 path): dequant first.
    r = convert("gguf:dequant[to=f16]:repack[to=nf4]:safetensors", in, dir / "nf4.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    t = read_header(dir / "nf4.safetensors").value;
    BOOST_TEST(t["blk.0.ffn_down.weight"]["dtype"] == "U8");
    BOOST_TEST(t["blk.0.ffn_down.weight"]["shape"] == json({256, 768 / 2}));
    BOOST_TEST(t["blk.0.ffn_down.weight.absmax"]["dtype"] == "F16");
    BOOST_TEST(t["blk.0.ffn_down.weight.absmax"]["shape"] == json({196608 / 64}));
    BOOST_TEST(t["__metadata__"]["blk.0.ffn_down.weight"] == "nf4-absmax-64");

    // Read back: the pair and its format are in the header the next stage sees.
    ck::RecordingContext context;
    ck::safetensors::SafetensorsReader reader(context);
    const ck::ModelHeader h = reader.open(dir / "nf4.safetensors");
    BOOST_TEST(h.metadata.find("ckhost.repack.blk.0.ffn_down.weight")->str() == "nf4-absmax-64");
    BOOST_TEST(h.find_tensor("blk.0.ffn_down.weight")->type == 24u);  // i8: the u8 codes
    BOOST_TEST(context.warnings().empty());
    r = convert("safetensors:safetensors", dir / "nf4.safetensors", dir / "again.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(dir / "nf4.safetensors", dir / "again.safetensors"));
}

BOOST_AUTO_TEST_CASE(inspect_and_verify_read_safetensors) {
    cktest::TempDir dir;
    const fs::path in = cktest::examples_dir() / "micro-llama-q4_k_m.gguf";
    auto r = convert("gguf:repack[to=int8]:safetensors", in, dir / "m.safetensors");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost({"inspect", (dir / "m.safetensors").string(), "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, ": safetensors\n"), r.out);
    BOOST_TEST(contains(r.out, "format: ckhost"), r.out);
    const std::string text = cktest::squeezed(r.out);
    BOOST_TEST(contains(text, "  general.architecture  str  \"llama\"\n"), r.out);
    BOOST_TEST(contains(text, "  ckhost.repack.output.weight  str  \"int8-minmax-128\"\n"), r.out);
    BOOST_TEST(contains(text, "  output.weight  int8  [1024, 256]  262,144  "), r.out);
    BOOST_TEST(contains(text, "  output.weight.minmax  f16  [2048, 2]  4,096  "), r.out);
    r = cktest::run_ckhost({"inspect", (dir / "m.safetensors").string(), "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    BOOST_TEST(doc["format"] == "safetensors");
    BOOST_TEST(doc["tensor_count"] == 37);
    r = cktest::run_ckhost({"verify", (dir / "m.safetensors").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "OK (safetensors, 37 tensors)"), r.out);
}

BOOST_AUTO_TEST_CASE(quantized_tensors_are_refused_before_anything_is_written) {
    cktest::TempDir dir;
    auto r = convert("gguf:safetensors", cktest::examples_dir() / "micro-llama-q4_k_m.gguf",
                     dir / "sub" / "m.safetensors");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "tensor 'token_embd.weight': type q4_K has no safetensors dtype"),
               r.err);
    BOOST_TEST(dir.entries().empty());
}

BOOST_AUTO_TEST_CASE(output_directory_gets_the_input_name) {
    cktest::TempDir dir;
    write_float_model(dir / "m.gguf");
    auto r = convert("gguf:safetensors", dir / "m.gguf", dir / "out/");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(fs::exists(dir / "out" / "m.safetensors"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_safetensors_roundtrip
