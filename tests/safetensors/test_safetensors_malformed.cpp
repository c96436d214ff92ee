// Malformed safetensors files, crafted here one rule at a time: each is refused with its reason
// and the tensor or key it is about, exit 1, and nothing is left behind.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ck/support/little_endian.hpp"
#include "inspect_output.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_safetensors_malformed {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

// A file with the given header JSON (its length written in front, unless `length` overrides
// it) and `data` bytes after it.
std::vector<unsigned char> craft(const std::string& header, std::size_t data,
                                 std::optional<std::uint64_t> length = {}) {
    std::vector<unsigned char> bytes(8 + header.size() + data);
    const std::uint64_t n = length.value_or(header.size());
    ck::le::store(bytes.data(), n);
    std::memcpy(bytes.data() + 8, header.data(), header.size());
    for (std::size_t i = 0; i < data; ++i)
        bytes[8 + header.size() + i] = static_cast<unsigned char>(i);
    return bytes;
}

struct Case {
    std::string what;
    std::vector<unsigned char> file;
    std::vector<std::string> expected;  // all must be in the one-line error
};

std::vector<Case> cases() {
    const std::string f32_2x2 = R"("dtype":"F32","shape":[2,2])";
    return {
        {"shorter than the length field", {1, 2, 3, 4, 5}, {"file is 5 bytes", "header length"}},
        {"header larger than the file",
         craft(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4, 4096),
         {"header of 4096 bytes is larger than the file", "byte 0"}},
        {"header not JSON", craft(R"({"a":{"dtype":"F32",)", 0), {"not valid JSON", "header"}},
        // A number no double holds is nlohmann's out_of_range, which escaped the plugin as
        // "plugin 'safetensors' failed" (found by fuzz_safetensors).
        {"number out of range",
         craft(R"({"a":1e18446744073709551615})", 0),
         {"not valid JSON", "number overflow", "header"}},
        {"header not an object", craft("[1,2]", 0), {"JSON but not an object"}},
        {"duplicate tensor name",
         craft(R"({"a":{)" + f32_2x2 + R"(,"data_offsets":[0,16]},"a":{)" + f32_2x2 +
                   R"(,"data_offsets":[16,32]}})",
               32),
         {"tensor 'a'", "duplicate tensor name"}},
        {"duplicate field",
         craft(R"({"a":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})", 4),
         {"tensor 'a'", "duplicate field 'dtype'"}},
        {"overlapping offsets",
         craft(R"({"a":{)" + f32_2x2 + R"(,"data_offsets":[0,16]},"b":{)" + f32_2x2 +
                   R"(,"data_offsets":[8,24]}})",
               24),
         {"tensor 'b'", "overlap tensor 'a' [0, 16]"}},
        {"offsets past the end",
         craft(R"({"a":{)" + f32_2x2 + R"(,"data_offsets":[8,24]}})", 16),
         {"tensor 'a'", "run past the end of the data (16 bytes)"}},
        {"end before begin",
         craft(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 8),
         {"tensor 'a'", "end before they begin"}},
        {"size does not match dtype and shape",
         craft(R"({"a":{)" + f32_2x2 + R"(,"data_offsets":[0,12]}})", 12),
         {"tensor 'a'", "dtype F32 and shape [2, 2] need 16 bytes, data_offsets hold 12"}},
        {"unknown dtype",
         craft(R"({"a":{"dtype":"F17","shape":[1],"data_offsets":[0,4]}})", 4),
         {"tensor 'a'", "unknown dtype 'F17'"}},
        {"dtype ggml cannot hold",
         craft(R"({"a":{"dtype":"U16","shape":[2],"data_offsets":[0,4]}})", 4),
         {"tensor 'a'", "dtype U16 has no ggml equivalent"}},
        {"negative dimension",
         craft(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
         {"tensor 'a'", "not a non-negative integer"}},
        {"missing field",
         craft(R"({"a":{"dtype":"F32","shape":[1]}})", 4),
         {"tensor 'a'", "needs \"dtype\", \"shape\" and \"data_offsets\""}},
        {"metadata value not a string",
         craft(R"({"__metadata__":{"n":5},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
               4),
         {"key 'n'", "values must be strings"}},
        {"GGUF value of the wrong type",
         craft(R"({"__metadata__":{"gguf.x":"\"abc\"","ckhost.gguf_types":"{\"x\":\"u32\"}"},)"
               R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
               4),
         {"key 'gguf.x'", "expected an integer"}},
        {"repacked tensor without its scales",
         craft(R"({"__metadata__":{"w":"int8-minmax-128"},)"
               R"("w":{"dtype":"U8","shape":[1,128],"data_offsets":[0,128]}})",
               128),
         {"tensor 'w'", "scales tensor 'w.minmax' is missing"}},
        {"repacked scales of the wrong shape",
         craft(R"({"__metadata__":{"w":"nf4-absmax-64"},)"
               R"("w":{"dtype":"U8","shape":[2,32],"data_offsets":[0,64]},)"
               R"("w.absmax":{"dtype":"F16","shape":[3],"data_offsets":[64,70]}})",
               70),
         {"tensor 'w'", "is f16 [3], expected f16 [2]"}},
        {"repacked codes not U8",
         craft(R"({"__metadata__":{"w":"int8-minmax-128"},)"
               R"("w":{"dtype":"I8","shape":[1,128],"data_offsets":[0,128]},)"
               R"("w.minmax":{"dtype":"F16","shape":[1,2],"data_offsets":[128,132]}})",
               132),
         {"tensor 'w'", "must be U8, not I8"}},
        {"repacked tensor that does not exist",
         craft(R"({"__metadata__":{"w":"int8-minmax-128"}})", 0),
         {"key 'w'", "there is none"}},
    };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(safetensors_malformed)

BOOST_AUTO_TEST_CASE(each_broken_rule_is_refused_with_its_reason) {
    for (const Case& c : cases()) {
        cktest::TempDir dir;
        const fs::path in = dir / "in.safetensors";
        cktest::write_file(in, c.file);
        fs::create_directory(dir / "out");
        auto r = cktest::run_ckhost({"--pipeline", "safetensors:gguf", "-i", in.string(), "-o",
                                     (dir / "out" / "o.gguf").string()});
        BOOST_TEST(r.exit_code == 1, c.what << ": " << r.err);
        for (const std::string& e : c.expected)
            BOOST_TEST(contains(r.err, e), c.what << ": expected \"" << e << "\" in: " << r.err);
        BOOST_TEST(contains(r.err, in.string()), c.what << ": the error names the file");
        BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, c.what << ": one line");
        BOOST_TEST(fs::is_empty(dir / "out"), c.what << ": nothing left behind");
        // inspect refuses it the same way (when the file looks like safetensors at all).
        if (c.file.size() > 9 && c.file[8] == '{') {
            auto i = cktest::run_ckhost({"inspect", in.string()});
            BOOST_TEST(i.exit_code == 1, c.what);
            BOOST_TEST(contains(i.err, c.expected.back()), c.what << ": " << i.err);
        }
    }
}

BOOST_AUTO_TEST_CASE(bytes_no_tensor_covers_are_read_but_fail_verify) {
    // Hugging Face's library refuses gaps; ckhost reads the tensors (with a warning) and
    // `verify` says what is wrong.
    cktest::TempDir dir;
    const fs::path in = dir / "gap.safetensors";
    cktest::write_file(in,
                       craft(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}    })", 12));
    auto r = cktest::run_ckhost(
        {"--pipeline", "safetensors:gguf", "-i", in.string(), "-o", (dir / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "4 bytes before tensor 'a' belong to no tensor"), r.err);
    BOOST_TEST(contains(r.err, "4 bytes after the last tensor belong to no tensor"), r.err);
    r = cktest::run_ckhost({"verify", in.string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "4 bytes before tensor 'a' belong to no tensor"), r.err);
}

BOOST_AUTO_TEST_CASE(another_tools_file_is_read) {
    // A Hugging Face style file: "format": "pt", untyped metadata, a U8 tensor that is not a
    // repacked weight, no GGUF keys.
    cktest::TempDir dir;
    const fs::path in = dir / "hf.safetensors";
    cktest::write_file(
        in, craft(R"({"__metadata__":{"format":"pt","note":"hello"},)"
                  R"("model.embed.weight":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},)"
                  R"("mask":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})",
                  12));
    auto r = cktest::run_ckhost({"inspect", in.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "format: pt"), r.out);
    BOOST_TEST(contains(cktest::squeezed(r.out), "  safetensors.note  str  \"hello\"\n"), r.out);
    BOOST_TEST(contains(r.err, "1 U8 tensor(s) read as i8"), r.err);
    // Through GGUF and back, the foreign entry keeps its name.
    r = cktest::run_ckhost(
        {"--pipeline", "safetensors:gguf", "-i", in.string(), "-o", (dir / "m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost({"--pipeline", "gguf:safetensors", "-i", (dir / "m.gguf").string(), "-o",
                            (dir / "back.safetensors").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto bytes = cktest::read_file(dir / "back.safetensors");
    const std::string header(bytes.begin() + 8, bytes.begin() + 200);
    BOOST_TEST(contains(header, R"("note":"hello")"), header);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_safetensors_malformed
