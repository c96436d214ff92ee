// examples/gguflite_read.py, a reader in another language (Python 3 standard library only),
// loads ckhost's GGUF-lite output and dequantizes every tensor to exactly the values ckhost
// itself gives (through gguflite:gguf), bit for bit.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "gguflite_reader.hpp"
#include "gguflite_test_files.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguflite_python {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

struct PythonPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(std::system("python3 --version >/dev/null 2>&1") ==
                                               0);
        ok.message() << "python3 is not on PATH: skipping the Python reader test";
        return ok;
    }
};

// Runs the example reader; its JSON summary goes to `summary`, the tensors to `dump`.
int run_python_reader(const fs::path& file, const fs::path& dump, const fs::path& summary) {
    const fs::path script = cktest::examples_dir() / "gguflite_read.py";
    const std::string command = "python3 '" + script.string() + "' '" + file.string() +
                                "' --dump '" + dump.string() + "' > '" + summary.string() +
                                "' 2> '" + summary.string() + ".err'";
    return std::system(command.c_str());
}

std::vector<unsigned char> as_f32_bytes(const ck::TensorInfo& t, std::span<const std::byte> b) {
    std::vector<unsigned char> out;
    if (t.type == 0)
        return {reinterpret_cast<const unsigned char*>(b.data()),
                reinterpret_cast<const unsigned char*>(b.data()) + b.size()};
    for (std::size_t i = 0; i < b.size(); i += 2) {  // F16: widened exactly
        const float f = ck::kernels::f16_to_f32(ck::le::load<std::uint16_t>(b.data() + i));
        unsigned char bytes[4];
        ck::le::store(bytes, f);  // as the Python reader dumps it
        out.insert(out.end(), bytes, bytes + 4);
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguflite_python)

BOOST_AUTO_TEST_CASE(python_reader_matches_ckhost, *utf::precondition(PythonPresent())) {
    cktest::TempDir dir;
    // Every dtype in one file: q4 by default, q8 and f16 by name, F16 norms (keep=f16), F32.
    std::ofstream(dir / "schemes.json")
        << R"({"*attn_q*": "q8", "*ffn_down*": "f16", "output.weight": "f32"})";
    auto r =
        gltest::convert("gguf:gguflite[keep=f16,schemes=" + (dir / "schemes.json").string() + "]",
                        gltest::sample(), dir / "m.gguflite");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST_REQUIRE(run_python_reader(dir / "m.gguflite", dir / "dump", dir / "summary.json") ==
                       0);
    r = gltest::convert("gguflite:gguf", dir / "m.gguflite", dir / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);

    ck::RecordingContext context;
    ckplugin::gguf::GgufReader gguf(context);
    const ck::ModelHeader h = gguf.open(dir / "m.gguf");
    std::ifstream summary_file(dir / "summary.json");
    const auto summary = nlohmann::json::parse(summary_file);
    BOOST_TEST_REQUIRE(summary["tensors"].size() == h.tensors.size());
    std::set<std::string> dtypes;
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        const auto& t = h.tensors[i];
        BOOST_TEST(summary["tensors"][i]["name"].get<std::string>() == t.name);
        dtypes.insert(summary["tensors"][i]["dtype"].get<std::string>());
        // --dump names each file after its tensor (these names need no escaping).
        const auto python = cktest::read_file(dir / "dump" / (t.name + ".f32"));
        const auto ckhost = as_f32_bytes(t, gguf.tensor(i).bytes());
        BOOST_TEST((python == ckhost), t.name << ": Python's values differ from ckhost's");
    }
    BOOST_TEST(dtypes.size() == 4u, "the file should hold all four dtypes");

    // The metadata, typed the same way.
    BOOST_TEST_REQUIRE(summary["metadata"].size() == h.metadata.size());
    for (const auto& [key, value] : h.metadata) {
        const auto& entry = summary["metadata"][key];
        std::string type(ck::value_type_name(value.type()));
        if (value.type() == ck::ValueType::array)
            type = "arr[" + std::string(ck::value_type_name(value.array().element_type())) + "]";
        BOOST_TEST(entry["type"].get<std::string>() == type, key);
    }
    BOOST_TEST(summary["metadata"]["tokenizer.ggml.tokens"]["value"]["count"].get<int>() == 1024);
    BOOST_TEST(summary["metadata"]["general.architecture"]["value"].get<std::string>() == "llama");
}

BOOST_AUTO_TEST_CASE(python_reader_reads_every_value_type, *utf::precondition(PythonPresent())) {
    cktest::TempDir dir;
    auto r = gltest::convert("gguf:gguflite[scheme=f32]",
                             cktest::test_data() / "meta" / "metadata.gguf", dir / "m.gguflite");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST_REQUIRE(run_python_reader(dir / "m.gguflite", dir / "dump", dir / "s.json") == 0);
    std::ifstream summary_file(dir / "s.json");
    const auto meta = nlohmann::json::parse(summary_file)["metadata"];
    BOOST_TEST(meta.size() == 58u);
    BOOST_TEST(meta["test.u64"]["value"].get<std::uint64_t>() == 18364758544493064720ull);
    BOOST_TEST(meta["test.limits.i64_min"]["value"].get<std::int64_t>() == INT64_MIN);
    BOOST_TEST(meta["test.f32"]["value"].get<float>() == 3.14159274f);
    BOOST_TEST(std::signbit(meta["test.limits.f32_neg_zero"]["value"].get<double>()));
    BOOST_TEST(meta["test.limits.f32_nan"]["value"].get<std::string>() == "nan");
    BOOST_TEST(meta["test.string_escapes"]["value"].get<std::string>() ==
               "tab\there\nnewline \"quoted\" back\\slash");
    BOOST_TEST(meta["test.arr.long_u32"]["value"]["count"].get<int>() == 100000);
    BOOST_TEST(meta["test.arr.bool"]["type"].get<std::string>() == "arr[bool]");
}

BOOST_AUTO_TEST_CASE(python_reader_refuses_a_bad_magic, *utf::precondition(PythonPresent())) {
    cktest::TempDir dir;
    gltest::FileBuilder b;
    b.magic_value = 0x46554747;
    cktest::write_file(dir / "bad.gguflite", b.bytes());
    BOOST_TEST(run_python_reader(dir / "bad.gguflite", dir / "dump", dir / "s.json") != 0);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguflite_python
