// The reference K-quant quantizers (Q2_K ... Q6_K) against ggml's bytes.
//
// Two sources of truth, both written by ggml itself:
// - tests/data/types/types.gguf (ggml commit d99724f): one 1024x8 tensor per type, quantized
//   from <name>.src.f32 (rows: N(0,1), N(0,0.02), outliers, all zero, scales 1e-6..1e2, ties,
//   ternary, offset mean);
// - ../shared/testdata/quant/*.gguf (llama-quantize, ggml 0.25.1, no importance matrix): real
//   weights, quantized from the F16 / F32 / Q8_0 models beside them.
// Every row is quantized on its own and compared byte for byte; a mismatch names the block and
// the field of the first differing byte.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/quantize.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_kquants {

namespace fs = std::filesystem;

namespace {

using QuantizeFn = void (*)(const float*, std::byte*, std::size_t);

struct Field {
    const char* name;
    std::size_t begin;  // byte offset in the block
    std::size_t end;
};

struct KQuant {
    const char* name;  // ggml's type name, also the tensor's name in types.gguf
    std::uint32_t type;
    QuantizeFn quantize;
    std::size_t block_bytes;
    std::vector<Field> fields;  // ggml's block_qN_K layout
};

const std::vector<KQuant>& kquants() {
    using ck::GgmlType;
    static const std::vector<KQuant> all = {
        {"q2_K",
         static_cast<std::uint32_t>(GgmlType::q2_k),
         ck::kernels::quantize_row_q2_K,
         84,
         {{"scales", 0, 16}, {"qs", 16, 80}, {"d", 80, 82}, {"dmin", 82, 84}}},
        {"q3_K",
         static_cast<std::uint32_t>(GgmlType::q3_k),
         ck::kernels::quantize_row_q3_K,
         110,
         {{"hmask", 0, 32}, {"qs", 32, 96}, {"scales", 96, 108}, {"d", 108, 110}}},
        {"q4_K",
         static_cast<std::uint32_t>(GgmlType::q4_k),
         ck::kernels::quantize_row_q4_K,
         144,
         {{"d", 0, 2}, {"dmin", 2, 4}, {"scales", 4, 16}, {"qs", 16, 144}}},
        {"q5_K",
         static_cast<std::uint32_t>(GgmlType::q5_k),
         ck::kernels::quantize_row_q5_K,
         176,
         {{"d", 0, 2}, {"dmin", 2, 4}, {"scales", 4, 16}, {"qh", 16, 48}, {"qs", 48, 176}}},
        {"q6_K",
         static_cast<std::uint32_t>(GgmlType::q6_k),
         ck::kernels::quantize_row_q6_K,
         210,
         {{"ql", 0, 128}, {"qh", 128, 192}, {"scales", 192, 208}, {"d", 208, 210}}},
    };
    return all;
}

const KQuant* kquant_of_type(std::uint32_t type) {
    for (const KQuant& k : kquants())
        if (k.type == type) return &k;
    return nullptr;
}

std::string field_at(const KQuant& k, std::size_t offset) {
    for (const Field& f : k.fields) {
        if (offset >= f.begin && offset < f.end)
            return std::string(f.name) + "[" + std::to_string(offset - f.begin) + "]";
    }
    return "?";
}

// Empty when the quantized row `got` equals ggml's `want`; otherwise the first differing block
// and byte (with its field), and how many blocks of the row differ.
std::string compare_row(const KQuant& k, const std::vector<std::byte>& got, const std::byte* want) {
    if (std::memcmp(got.data(), want, got.size()) == 0) return {};
    const std::size_t blocks = got.size() / k.block_bytes;
    std::size_t bad_blocks = 0, first_block = blocks, first_byte = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
        const std::byte* g = got.data() + b * k.block_bytes;
        const std::byte* w = want + b * k.block_bytes;
        if (std::memcmp(g, w, k.block_bytes) == 0) continue;
        ++bad_blocks;
        if (first_block != blocks) continue;
        first_block = b;
        while (g[first_byte] == w[first_byte]) ++first_byte;
    }
    const std::size_t at = first_block * k.block_bytes + first_byte;
    std::ostringstream s;
    s << "block " << first_block << ", byte " << first_byte << " (" << field_at(k, first_byte)
      << "): got 0x" << std::hex << std::setw(2) << std::setfill('0')
      << static_cast<unsigned>(got[at]) << ", ggml 0x" << std::setw(2)
      << static_cast<unsigned>(want[at]) << std::dec << " (" << bad_blocks << " of " << blocks
      << " blocks differ)";
    return s.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_kquants)

// All 8 rows of each K-quant tensor of types.gguf, quantized from <name>.src.f32.
BOOST_AUTO_TEST_CASE(types_gguf_matches_ggml_byte_for_byte) {
    const fs::path dir = cktest::test_data() / "types";
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(dir / "types.gguf");

    std::vector<std::string> failed;
    for (const KQuant& k : kquants()) {
        BOOST_TEST_CONTEXT("type " << k.name) {
            std::size_t index = header.tensors.size();
            for (std::size_t i = 0; i < header.tensors.size(); ++i)
                if (header.tensors[i].name == k.name) index = i;
            BOOST_TEST_REQUIRE(index < header.tensors.size(), "no tensor " << k.name);
            const ck::TensorInfo& info = header.tensors[index];
            BOOST_TEST_REQUIRE(info.type == k.type);
            BOOST_TEST_REQUIRE(info.ne.size() == 2u);
            const auto row_len = static_cast<std::size_t>(info.ne[0]);
            const auto rows = static_cast<std::size_t>(info.ne[1]);
            BOOST_TEST_REQUIRE(row_len % 256 == 0u);

            const std::vector<float> src =
                cktest::read_floats(dir / (std::string(k.name) + ".src.f32"));
            BOOST_TEST_REQUIRE(src.size() == row_len * rows);
            const ck::TensorView view = reader.tensor(index);
            const std::size_t row_bytes = row_len / 256 * k.block_bytes;
            BOOST_TEST_REQUIRE(view.size() == row_bytes * rows);

            bool ok = true;
            std::vector<std::byte> got(row_bytes);
            for (std::size_t r = 0; r < rows; ++r) {
                k.quantize(src.data() + r * row_len, got.data(), row_len);
                const std::string problem = compare_row(k, got, view.data() + r * row_bytes);
                BOOST_TEST(problem.empty(), k.name << " row " << r << ": " << problem);
                ok = ok && problem.empty();
            }
            if (!ok) failed.emplace_back(k.name);
        }
    }
    std::string list;
    for (const auto& name : failed) list += " " + name;
    BOOST_TEST(failed.empty(), "types that differ from ggml:" << list);
}

// Every K-quant tensor llama-quantize wrote into ../shared/testdata/quant, requantized from the
// same source tensor (widened to f32 by the scalar dequantizer, which is bit-exact to ggml's
// to_float: F16 and F32 here, Q8_0 for the --allow-requantize file).
BOOST_AUTO_TEST_CASE(llama_quantize_outputs_match_byte_for_byte,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    struct Pair {
        std::string output;  // in quant/
        fs::path source;
    };
    std::vector<Pair> pairs;
    for (const char* mix : {"q2_k", "q3_k_s", "q3_k_m", "q3_k_l", "q4_k_s", "q4_k_m", "q4_k_m-pure",
                            "q4_k_m-out_q8_0-embd_q8_0", "q5_k_s", "q5_k_m", "q6_k"})
        pairs.push_back(
            {std::string("micro-llama-f16.") + mix + ".gguf", root / "micro-llama-f16.gguf"});
    pairs.push_back({"micro-llama-f32.q4_k_m.gguf", root / "micro-llama-f32.gguf"});
    pairs.push_back({"micro-llama-q8_0.requant.q4_k_m.gguf", root / "micro-llama-q8_0.gguf"});
    for (const char* mix : {"q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k"})
        pairs.push_back(
            {std::string("micro-odd-f16.") + mix + ".gguf", root / "quant" / "micro-odd-f16.gguf"});

    const ck::kernels::DequantTable& widen = ck::kernels::scalar_dequant_table();
    std::map<std::string, std::size_t> compared;  // tensors per K type
    std::vector<std::string> failed;
    for (const Pair& pair : pairs) {
        const fs::path out_path = root / "quant" / pair.output;
        BOOST_TEST_CONTEXT("file " << pair.output) {
            BOOST_TEST_REQUIRE(fs::exists(out_path));
            BOOST_TEST_REQUIRE(fs::exists(pair.source));
            ck::RecordingContext context;
            ckplugin::gguf::GgufReader out_reader(context), src_reader(context);
            const ck::ModelHeader out = out_reader.open(out_path);
            const ck::ModelHeader src = src_reader.open(pair.source);

            for (std::size_t i = 0; i < out.tensors.size(); ++i) {
                const ck::TensorInfo& info = out.tensors[i];
                const KQuant* k = kquant_of_type(info.type);
                if (!k || info.ne.size() != 2) continue;
                BOOST_TEST_CONTEXT("tensor " << info.name << " (" << k->name << ")") {
                    std::size_t si = src.tensors.size();
                    for (std::size_t j = 0; j < src.tensors.size(); ++j)
                        if (src.tensors[j].name == info.name) si = j;
                    BOOST_TEST_REQUIRE(si < src.tensors.size(), "not in the source");
                    const ck::TensorInfo& sinfo = src.tensors[si];
                    BOOST_TEST_REQUIRE((sinfo.ne == info.ne));
                    const ck::kernels::DequantFn to_f32 = widen.fn[sinfo.type];
                    BOOST_TEST_REQUIRE(to_f32 != nullptr);

                    std::vector<float> x(sinfo.elements());
                    to_f32(src_reader.tensor(si).data(), x.data(), x.size());
                    const ck::TensorView view = out_reader.tensor(i);
                    const auto row_len = static_cast<std::size_t>(info.ne[0]);
                    const auto rows = static_cast<std::size_t>(info.ne[1]);
                    const std::size_t row_bytes = row_len / 256 * k->block_bytes;
                    BOOST_TEST_REQUIRE(view.size() == row_bytes * rows);

                    std::vector<std::byte> got(row_bytes);
                    std::string problem;
                    std::size_t bad_rows = 0;
                    for (std::size_t r = 0; r < rows; ++r) {
                        k->quantize(x.data() + r * row_len, got.data(), row_len);
                        const std::string p = compare_row(*k, got, view.data() + r * row_bytes);
                        if (p.empty()) continue;
                        if (bad_rows++ == 0) problem = "row " + std::to_string(r) + ", " + p;
                    }
                    BOOST_TEST(bad_rows == 0u, pair.output << ": " << info.name << " (" << k->name
                                                           << "): " << bad_rows
                                                           << " rows differ, first " << problem);
                    if (bad_rows != 0) failed.push_back(pair.output + ":" + info.name);
                    ++compared[k->name];
                }
            }
        }
    }
    std::ostringstream counts;
    for (const auto& [name, n] : compared) counts << " " << name << ":" << n;
    BOOST_TEST_MESSAGE("K-quant tensors compared:" << counts.str());
    for (const KQuant& k : kquants())
        BOOST_TEST(compared[k.name] > 0u, "no " << k.name << " tensor in the llama-quantize files");
    std::string list;
    for (const auto& name : failed) list += " " + name;
    BOOST_TEST(failed.empty(), "tensors that differ from llama-quantize:" << list);
}

// Throughput on 64 MiB of N(0,1) floats, single thread. Disabled by default (it only prints);
// run it with: test_kernels --run_test=quantize_kquants/throughput
BOOST_AUTO_TEST_CASE(throughput, *boost::unit_test::disabled()) {
    const std::size_t n = (std::size_t{64} << 20) / sizeof(float);
    std::vector<float> x(n);
    std::mt19937 rng(12345);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : x) v = normal(rng);
    for (const KQuant& k : kquants()) {
        std::vector<std::byte> out(n / 256 * k.block_bytes);
        const auto start = std::chrono::steady_clock::now();
        k.quantize(x.data(), out.data(), n);
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        std::cout << k.name << ": " << std::fixed << std::setprecision(1)
                  << static_cast<double>(n * sizeof(float)) / 1e6 / took.count()
                  << " MB/s of f32 input (" << std::setprecision(3) << took.count() << " s)\n";
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_quantize_kquants
