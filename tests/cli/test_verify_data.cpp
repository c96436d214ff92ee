// `ckhost verify --data` (issue 14): every float and every block scale checked for NaN and
// infinities as llama.cpp's --check-tensors does, naming the tensor and the first bad value;
// bytes after the last tensor of a GGUF fail `verify` as they do for safetensors. The broken
// files are copies of the committed sample, made here.
#include <boost/test/unit_test.hpp>

#include <cstring>

#include <nlohmann/json.hpp>

#include "ck/support/little_endian.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_verify_data {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

// A copy of the sample model in a temporary directory, changed byte by byte.
struct Broken {
    cktest::TempDir dir;
    fs::path file = dir / "model.gguf";
    std::vector<unsigned char> bytes = cktest::read_file(cktest::sample_model());

    // Where tensor `name` starts in the file (inspect's offset is the file's).
    std::size_t offset_of(const std::string& name) const {
        auto r =
            cktest::run_ckhost({"inspect", cktest::sample_model().string(), "--json", "--tensors"});
        const json doc = json::parse(r.out);
        for (const json& t : doc["tensors"])
            if (t["name"] == name) return t["offset"].get<std::size_t>();
        BOOST_FAIL("no tensor " << name);
        return 0;
    }
    void put_u16(std::size_t at, std::uint16_t v) { ck::le::store(bytes.data() + at, v); }
    void put_u32(std::size_t at, std::uint32_t v) { ck::le::store(bytes.data() + at, v); }
    const fs::path& save() {
        cktest::write_file(file, bytes);
        return file;
    }
};

cktest::RunResult verify(const fs::path& file, bool json_output = false) {
    std::vector<std::string> args = {"verify", "--data", file.string()};
    if (json_output) args.push_back("--json");
    return cktest::run_ckhost(args);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_data)

BOOST_AUTO_TEST_CASE(a_clean_model_passes) {
    const fs::path sample = cktest::sample_model();
    auto r = verify(sample);
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "OK (gguf, 21 tensors, every value checked)"), r.out);
    r = verify(sample, true);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    BOOST_TEST(doc["ok"].get<bool>());
    BOOST_TEST(doc["data_checked"].get<bool>());
    BOOST_TEST(doc["problems"].empty());
    // Without --data the values are not read.
    r = cktest::run_ckhost({"verify", sample.string(), "--json"});
    BOOST_TEST(!json::parse(r.out)["data_checked"].get<bool>());
}

BOOST_AUTO_TEST_CASE(a_nan_in_a_float_tensor) {
    Broken b;
    const std::size_t norm = b.offset_of("blk.0.ffn_norm.weight");
    b.put_u32(norm + 4 * 123, 0x7fc00000u);  // element 123: NaN
    b.save();
    // The structure is sound: plain verify passes, as it reads no values.
    BOOST_TEST(cktest::run_ckhost({"verify", b.file.string()}).exit_code == 0);
    auto r = verify(b.file);
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(r.out.empty(), r.out);
    BOOST_TEST(contains(r.err, "ckhost: error: " + b.file.string() + ": byte " +
                                   std::to_string(norm + 4 * 123) +
                                   ": tensor 'blk.0.ffn_norm.weight': element 123 is NaN\n"),
               r.err);
}

BOOST_AUTO_TEST_CASE(bad_block_scales_in_several_tensors) {
    Broken b;
    // blk.0.attn_q.weight is Q4_K (144-byte blocks, d first): block 17's d becomes +Inf, and
    // block 20's dmin NaN. output.weight is Q6_K (210-byte blocks, d at byte 208): block 2's d
    // becomes -Inf.
    const std::size_t q = b.offset_of("blk.0.attn_q.weight");
    const std::size_t out = b.offset_of("output.weight");
    b.put_u16(q + 17 * 144, 0x7c00);
    b.put_u16(q + 20 * 144 + 2, 0x7e00);
    b.put_u16(out + 2 * 210 + 208, 0xfc00);
    b.save();
    auto r = verify(b.file);
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err,
                        "tensor 'blk.0.attn_q.weight': block 17 scale d is Inf (2 bad "
                        "values in the tensor)\n"),
               r.err);
    BOOST_TEST(contains(r.err, "byte " + std::to_string(out + 2 * 210 + 208) +
                                   ": tensor 'output.weight': block 2 scale d is Inf\n"),
               r.err);

    r = verify(b.file, true);
    BOOST_TEST(r.exit_code == 1, r.err);
    const json doc = json::parse(r.out);
    BOOST_TEST(!doc["ok"].get<bool>());
    BOOST_TEST_REQUIRE(doc["problems"].size() == 2u);
    const json& first = doc["problems"][0];
    BOOST_TEST(first["tensor"].get<std::string>() == "blk.0.attn_q.weight");
    BOOST_TEST(first["type"].get<std::string>() == "q4_K");
    BOOST_TEST(first["block"].get<int>() == 17);
    BOOST_TEST(first["field"].get<std::string>() == "scale d");
    BOOST_TEST(first["value"].get<std::string>() == "Inf");
    BOOST_TEST(first["count"].get<int>() == 2);
    BOOST_TEST(first["offset"].get<std::size_t>() == q + 17 * 144);
    BOOST_TEST(doc["problems"][1]["tensor"].get<std::string>() == "output.weight");
}

BOOST_AUTO_TEST_CASE(bytes_after_the_last_tensor_fail_verify) {
    Broken b;
    const std::size_t size = b.bytes.size();
    b.bytes.insert(b.bytes.end(), 7, 0xee);
    b.save();
    // Read with a warning, as safetensors does; inspect shows them.
    auto r = cktest::run_ckhost({"inspect", b.file.string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "trailing bytes: 7"), r.out);
    BOOST_TEST(contains(r.err, "warning: " + b.file.string() +
                                   ": 7 bytes after the last tensor belong to no tensor"),
               r.err);
    r = cktest::run_ckhost({"verify", b.file.string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(
        contains(r.err, "ckhost: error: " + b.file.string() + ": byte " + std::to_string(size) +
                            ": data: 7 bytes after the last tensor belong to no tensor"),
        r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_verify_data
