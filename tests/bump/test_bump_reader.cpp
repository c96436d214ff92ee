// The bump reader: `ckhost inspect` shows the header fields, the dtype table and the slot
// table; `ckhost verify` recomputes the SHA-256 and checks the size against header, table and
// config.json, exiting 0 only when the file is sound.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "bump_test_models.hpp"
#include "inspect_output.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_bump_reader {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

fs::path golden_q4() {
    return cktest::test_data() / "golden" / "micro-llama-q4_k_m";
}

// The reference output with its config.json, in a fresh directory the test may damage.
struct GoldenCopy {
    cktest::TempDir dir;
    fs::path bump = dir / "weights.bump";
    fs::path config = dir / "config.json";
    GoldenCopy() {
        fs::copy_file(golden_q4() / "weights.bump", bump);
        fs::copy_file(golden_q4() / "config.json", config);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(bump_reader)

BOOST_AUTO_TEST_CASE(inspect_shows_header_dtype_table_and_slots) {
    auto r = cktest::run_ckhost({"inspect", (golden_q4() / "weights.bump").string(), "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    for (std::string line :
         {": bump\n", "  magic: BUMPWGT3\n", "  version: 3\n", "  num_layers: 2\n",
          "  vocab_size: 1024\n", "  embed_dim: 256\n", "  context_len: 512\n", "  num_heads: 4\n",
          "  head_dim: 64\n", "  aligned_embed_dim: 256\n", "  aligned_head_dim: 64\n",
          "  aligned_context: 512\n",
          "  checksum: 0f3367e91ae161ceb933657872de84a45fce124c487d9e5aa5786d16d021c915\n",
          "  dtype table offset: 132\n", "  dtype table entries: 32\n", "  dtype table FP32: 19\n",
          "  dtype table Q4_K: 11\n", "  dtype table Q6_K: 2\n", "  num_kv_heads: 2\n",
          "  intermediate_size: 768\n", "  geometry from: config.json\n",
          "  config.hidden_size  u64  256\n", "tensors: 32",
          // slot, dtype, shape, elements, bytes, file offset
          "  token_emb  q4_K  [256, 1024]  262,144  147456  164\n",
          "  pos_emb  f32  [256, 512]  131,072  524288  147620\n",
          "  layer.0.w1  q4_K  [256, 1536]  393,216  221184  787620\n",
          "  layer.1.wv  q6_K  [256, 128]  32,768  26880  1185444\n",
          "  final_ln_bias  f32  [256]  256  1024  1641380\n"})
        BOOST_TEST(contains(cktest::squeezed(r.out), line), "'" << line << "' in:\n" << r.out);

    auto j = cktest::run_ckhost({"inspect", (golden_q4() / "weights.bump").string(), "--json"});
    BOOST_TEST_REQUIRE(j.exit_code == 0, j.err);
    auto doc = nlohmann::json::parse(j.out);
    BOOST_TEST(doc["format"].get<std::string>() == "bump");
    // Facts are typed fields (docs/json.md): numbers as numbers, snake_case keys.
    BOOST_TEST(doc["facts"]["aligned_context"].get<int>() == 512);
    BOOST_TEST(doc["facts"]["dtype_table_offset"].get<int>() == 132);
    BOOST_TEST(doc["facts"]["dtype_table_q4_k"].get<int>() == 11);
    BOOST_TEST(doc["facts"]["geometry_from"].get<std::string>() == "config.json");
    BOOST_TEST(doc["facts"]["checksum"].get<std::string>().size() == 64u);
    BOOST_TEST(doc["tensor_count"].get<int>() == 32);
}

BOOST_AUTO_TEST_CASE(without_config_json_the_geometry_comes_from_the_file_size) {
    cktest::TempDir dir;
    fs::copy_file(golden_q4() / "weights.bump", dir / "weights.bump");
    auto r = cktest::run_ckhost({"inspect", (dir / "weights.bump").string(), "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "num_kv_heads: 2\n"), r.out);
    BOOST_TEST(contains(r.out, "geometry from: inferred from the file size"), r.out);
    BOOST_TEST(contains(r.out, "config.json: absent"), r.out);
    BOOST_TEST(
        contains(cktest::squeezed(r.out), "  layer.1.wv  q6_K  [256, 128]  32,768  26880  1185444"),
        r.out);
    auto v = cktest::run_ckhost({"verify", (dir / "weights.bump").string()});
    BOOST_TEST(v.exit_code == 0, v.err);
    BOOST_TEST(contains(v.err, "no config.json"), v.err);
}

BOOST_AUTO_TEST_CASE(verify_accepts_a_sound_file) {
    GoldenCopy g;
    auto r = cktest::run_ckhost({"verify", g.bump.string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "OK (bump, 32 tensors)"), r.out);
    BOOST_TEST(r.err.empty(), r.err);
}

BOOST_AUTO_TEST_CASE(verify_detects_a_flipped_payload_byte) {
    for (std::size_t offset : {std::size_t(200), std::size_t(800000), std::size_t(1642403)}) {
        GoldenCopy g;
        auto bytes = cktest::read_file(g.bump);
        bytes[offset] ^= 0x10;
        cktest::write_file(g.bump, bytes);
        auto r = cktest::run_ckhost({"verify", g.bump.string()});
        BOOST_TEST(r.exit_code == 1, "offset " << offset << ": " << r.err);
        BOOST_TEST(contains(r.err, "checksum mismatch"), r.err);
        BOOST_TEST(contains(r.err, "byte 64"), r.err);  // where the checksum is
    }
}

BOOST_AUTO_TEST_CASE(verify_detects_a_truncated_file) {
    for (std::size_t keep :
         {std::size_t(1642403), std::size_t(500000), std::size_t(150), std::size_t(100)}) {
        GoldenCopy g;
        fs::resize_file(g.bump, keep);
        auto r = cktest::run_ckhost({"verify", g.bump.string()});
        BOOST_TEST(r.exit_code == 1, "size " << keep << ": " << r.err);
        BOOST_TEST((contains(r.err, "truncated") || contains(r.err, "ends inside")), r.err);
    }
}

BOOST_AUTO_TEST_CASE(verify_detects_trailing_bytes) {
    GoldenCopy g;
    auto bytes = cktest::read_file(g.bump);
    bytes.push_back(0);
    cktest::write_file(g.bump, bytes);
    auto r = cktest::run_ckhost({"verify", g.bump.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "1 bytes after the last slot"), r.err);
}

BOOST_AUTO_TEST_CASE(verify_checks_header_against_config) {
    GoldenCopy g;
    std::string text = cktest::read_text(g.config);
    text.replace(text.find("\"max_position_embeddings\": 512"), 30,
                 "\"max_position_embeddings\": 640");
    cktest::write_file(g.config, std::vector<unsigned char>(text.begin(), text.end()));
    auto r = cktest::run_ckhost({"verify", g.bump.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "key 'max_position_embeddings'"), r.err);
    BOOST_TEST(contains(r.err, "640"), r.err);
}

BOOST_AUTO_TEST_CASE(verify_checks_header_fields) {
    GoldenCopy g;
    auto bytes = cktest::read_file(g.bump);
    bytes[0x38] = 0x10;  // aligned_context 512 -> 528: no longer C rounded up to 16
    bytes[0x39] = 0x02;
    cktest::write_file(g.bump, bytes);
    auto r = cktest::run_ckhost({"verify", g.bump.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "aligned_context 528, expected 512"), r.err);
}

BOOST_AUTO_TEST_CASE(a_wrong_dtype_table_is_refused) {
    GoldenCopy g;
    auto bytes = cktest::read_file(g.bump);
    bytes[132 + 4] = 4;  // layer.0.wq: INT4, whose byte layout we do not know
    cktest::write_file(g.bump, bytes);
    auto r = cktest::run_ckhost({"inspect", g.bump.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "slot 'layer.0.wq'"), r.err);
    BOOST_TEST(contains(r.err, "INT4"), r.err);
}

BOOST_AUTO_TEST_CASE(a_huge_head_count_is_refused_at_once) {
    // num_heads 2^32 - 1 and no config.json: the inference of num_key_value_heads counted up to
    // num_heads, seconds of work and then a division by zero (found by fuzz_bump).
    cktest::TempDir dir;
    const fs::path bump = dir / "weights.bump";
    fs::copy_file(golden_q4() / "weights.bump", bump);
    auto bytes = cktest::read_file(bump);
    for (std::size_t i = 0x20; i < 0x24; ++i) bytes[i] = 0xff;  // num_heads
    cktest::write_file(bump, bytes);
    auto r = cktest::run_ckhost({"verify", bump.string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "fits no (num_key_value_heads, intermediate_size) pairs"), r.err);
}

// A file of another format given to the bump reader (`bump:gguf -i model.gguf`): the refusal
// says it is neither bump version (it said "magic is not BUMPWGT3", as if only v3 were read);
// what the file is and which reader opens it, the host adds from the readers' probes.
BOOST_AUTO_TEST_CASE(another_format_is_neither_bump_version) {
    cktest::TempDir in, out;
    const std::string gguf = (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
    cktest::write_file(in / "junk.bump", std::vector<unsigned char>(200, 'x'));
    for (const std::string& input : {gguf, (in / "junk.bump").string()}) {
        auto r = cktest::run_ckhost(
            {"--pipeline", "bump:gguf", "-i", input, "-o", (out / "x.gguf").string()});
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, input + ": byte 0: not a bump file (the magic is neither "
                                           "BUMPWGT3 nor BUMPWGT4)"),
                   r.err);
        BOOST_TEST(!contains(r.err, "magic is not BUMPWGT3"), r.err);
        BOOST_TEST(out.entries().empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_bump_reader
