// Row blocks (docs/design.md, "Row blocks"): a tensor larger than a block, that every stage of
// the pipeline can take in runs of rows, travels in blocks of about 4 MiB (less under a small
// --max-memory). The files are the bytes whole tensors give; the runner says how many blocks
// it wrote; and a conversion's memory stays at a few blocks, not the largest tensor.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/support/little_endian.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_row_blocks {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using nlohmann::json;

namespace {

struct Converted {
    std::string sha256;
    json ahead;  // the report's compute_ahead
};

Converted convert(const std::string& pipeline, const fs::path& input, const std::string& output,
                  const std::vector<std::string>& options) {
    cktest::TempDir out;
    std::vector<std::string> args = {
        "--json", "--quiet",      "--pipeline", pipeline,
        "-i",     input.string(), "-o",         (out / output).string()};
    args.insert(args.begin(), options.begin(), options.end());
    const auto r = cktest::run_ckhost(args);
    BOOST_TEST_REQUIRE(r.exit_code == 0, pipeline << ": " << r.err);
    const json report = json::parse(r.out);
    return {report.at("checksums").begin()->get<std::string>(), report.at("compute_ahead")};
}

// IEEE half-precision bits of a small integer (|k| <= 2048: exact in f16).
std::uint16_t half_of(int k) {
    if (k == 0) return 0;
    const unsigned magnitude = static_cast<unsigned>(std::abs(k));
    const int exponent = std::bit_width(magnitude) - 1;
    const unsigned mantissa = (magnitude << (10 - exponent)) & 0x3ffu;
    return static_cast<std::uint16_t>((k < 0 ? 0x8000u : 0u) |
                                      static_cast<unsigned>(exponent + 15) << 10 | mantissa);
}

int value_at(std::uint64_t i) {
    return static_cast<int>(i % 4093) - 2046;
}

// A safetensors file holding one f16 tensor "w" of rows x cols, element i = value_at(i).
void write_f16_tensor(const fs::path& path, std::uint64_t rows, std::uint64_t cols) {
    const std::uint64_t bytes = rows * cols * 2;
    std::string header =
        json{{"w", {{"dtype", "F16"}, {"shape", {rows, cols}}, {"data_offsets", {0, bytes}}}}}
            .dump();
    while (header.size() % 8) header += ' ';
    std::ofstream out(path, std::ios::binary);
    char length[8];
    ck::le::store(length, static_cast<std::uint64_t>(header.size()));
    out.write(length, 8);
    out << header;
    std::vector<std::uint16_t> row(cols);
    for (std::uint64_t r = 0; r < rows; ++r) {
        for (std::uint64_t c = 0; c < cols; ++c) row[c] = half_of(value_at(r * cols + c));
        ck::le::in_place(std::span(row));  // host halves to the file's bytes
        out.write(reinterpret_cast<const char*>(row.data()),
                  static_cast<std::streamsize>(cols * 2));
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(row_blocks)

BOOST_AUTO_TEST_CASE(blocks_write_what_whole_tensors_write) {
    struct Case {
        std::string pipeline, output;
        bool in_blocks;  // every stage takes rows
    };
    const Case cases[] = {
        {"gguf:gguf", "o.gguf", true},
        {"gguf:gguf[endian=big]", "o.gguf", true},
        {"gguf:dequant:gguf", "o.gguf", true},
        {"gguf:dequant[to=f16,skip=blk.1.*]:gguf", "o.gguf", true},
        {"gguf:dequant:quantize[to=q8_0]:gguf", "o.gguf", true},
        {"gguf:dequant:quantize[mix=q4_k_m]:gguf", "o.gguf", true},
        {"gguf:meta[rename_tensors=^blk\\.0\\.=layer0.]:gguf", "o.gguf", true},
        // Stages that take tensors whole: the host gives them whole tensors.
        {"gguf:dequant[to=f16]:safetensors", "o.safetensors", false},
        {"gguf:headpack:bump", "b/", false},
        {"gguf:dequant:repack[to=nf4]:safetensors", "o.safetensors", false},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.pipeline) {
            // The sample's tensors are all smaller than the 4 MiB block: whole.
            const Converted whole = convert(c.pipeline, cktest::sample_model(), c.output, {});
            BOOST_TEST(whole.ahead.at("row_blocks").get<std::uint64_t>() == 0u);
            BOOST_TEST(whole.ahead.at("block_bytes").get<std::uint64_t>() == 4u << 20);
            // A 16K budget over two threads: blocks of 4K (at f32 width).
            const Converted blocks = convert(c.pipeline, cktest::sample_model(), c.output,
                                             {"--max-memory", "16K", "--threads", "2"});
            BOOST_TEST(blocks.ahead.at("block_bytes").get<std::uint64_t>() == 4096u);
            BOOST_TEST((blocks.ahead.at("row_blocks").get<std::uint64_t>() > 0) == c.in_blocks);
            BOOST_TEST(blocks.sha256 == whole.sha256);
        }
    }
}

// A 32 MiB f16 tensor widened to 64 MiB of f32: whole, the output buffer alone would be 64 MiB;
// in blocks the whole process stays under 48 MiB (the kernel's own high-water mark).
BOOST_AUTO_TEST_CASE(a_large_tensor_never_is_in_memory_whole) {
    cktest::TempDir dir;
    const std::uint64_t rows = 4096, cols = 4096;
    write_f16_tensor(dir / "big.safetensors", rows, cols);
    const auto r = cktest::run_ckhost(
        {"--json", "--quiet", "--threads", "2", "--pipeline", "safetensors:dequant[to=f32]:gguf",
         "-i", (dir / "big.safetensors").string(), "-o", (dir / "big.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json ahead = json::parse(r.out).at("compute_ahead");
    BOOST_TEST(ahead.at("row_blocks").get<std::uint64_t>() >= 16u, ahead.dump());
    // Every value arrives, in order: the data section ends the file (64 MiB: no padding).
    const auto out = cktest::read_file(dir / "big.gguf");
    const std::uint64_t n = rows * cols;
    BOOST_TEST_REQUIRE(out.size() > n * 4);
    const unsigned char* data = out.data() + (out.size() - n * 4);
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        wrong += ck::le::load<float>(data + i * 4) != static_cast<float>(value_at(i));
    }
    BOOST_TEST(wrong == 0u);
    if (cktest::sanitizer_build()) {
        BOOST_TEST_MESSAGE("peak memory not checked: the sanitizers' shadow memory counts too");
        return;
    }
    if (const auto qemu = cktest::emulator()) {
        // qemu-user's translated code and its own heap are the process's RSS too (61.7 MB
        // under qemu-aarch64, of which ckhost's blocks are 12 MiB: peak_bytes).
        BOOST_TEST_MESSAGE("peak memory not checked under " << *qemu << ": its own memory counts");
        return;
    }
    BOOST_TEST(ahead.at("peak_rss").get<std::uint64_t>() < 48u << 20, ahead.dump());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_row_blocks
