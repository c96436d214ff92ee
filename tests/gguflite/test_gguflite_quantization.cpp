// Q8_per_channel and Q4_per_group_64 exactly as docs/formats/gguf-lite.md computes them: the file's
// bytes equal the spec's formulas computed independently here, the round-trip check finds the
// reloaded values equal to the writer's fake quantization (error exactly 0), every quantizer
// variant gives the same bytes, and the size table comes out as expected.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "gguflite_codec.hpp"
#include "gguflite_reader.hpp"
#include "gguflite_test_files.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguflite_quantization {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

// Converts micro-llama-f32 with `scheme` and checks every 2-D tensor against the reference.
nlohmann::json check_scheme(const std::string& scheme) {
    cktest::TempDir dir;
    const fs::path source = *cktest::shared_data() / "micro-llama-f32.gguf";
    const fs::path out = dir / "micro.gguflite";
    auto r =
        gltest::convert("gguf:gguflite[scheme=" + scheme + ",report]", source, out, {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);

    ck::RecordingContext context;
    ckplugin::gguf::GgufReader f32(context);
    ckplugin::gguflite::GgufLiteReader lite(context);
    const ck::ModelHeader a = f32.open(source);
    lite.open(out);
    BOOST_TEST_REQUIRE(lite.stored().size() == a.tensors.size());
    std::uint64_t expected_offset = 0;
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        const auto& t = a.tensors[i];
        const auto& s = lite.stored()[i];
        BOOST_TEST(s.offset == expected_offset, t.name);  // packed in order
        expected_offset += s.bytes;
        const std::vector<float> w = cktest::floats_of(f32.tensor(i).bytes());
        const auto stored = lite.stored_bytes(i);
        std::vector<unsigned char> expected;
        if (t.ne.size() == 2) {
            BOOST_TEST(s.dims == (std::vector<std::uint32_t>{std::uint32_t(t.ne[1]),
                                                             std::uint32_t(t.ne[0])}));
            BOOST_TEST((s.dtype == (scheme == "q8" ? ckplugin::gguflite::Dtype::q8
                                                   : ckplugin::gguflite::Dtype::q4)));
            expected = scheme == "q8" ? gltest::reference_q8(w, t.ne[1], t.ne[0])
                                      : gltest::reference_q4(w, t.ne[1], t.ne[0]);
        } else {  // 1-D norms stay F32
            BOOST_TEST((s.dtype == ckplugin::gguflite::Dtype::f32));
            const ck::TensorView view = f32.tensor(i);
            const auto raw = view.bytes();
            expected.resize(raw.size());
            std::memcpy(expected.data(), raw.data(), raw.size());
        }
        BOOST_TEST_REQUIRE(stored.size() == expected.size(), t.name);
        BOOST_TEST(std::memcmp(stored.data(), expected.data(), expected.size()) == 0,
                   t.name << ": bytes differ from the spec's formulas");
    }
    auto doc = nlohmann::json::parse(r.out);
    const auto& round_trip = doc["reports"]["gguflite.round_trip"];
    BOOST_TEST(round_trip["ok"].get<bool>());
    BOOST_TEST(round_trip["max_abs_error_vs_fake_quant"].get<double>() == 0.0);
    for (const auto& row : round_trip["tensors"]) {
        BOOST_TEST(row["max_abs_error_vs_fake_quant"].get<double>() == 0.0);
        BOOST_TEST(row["mismatched_values"].get<int>() == 0);
    }
    BOOST_TEST(contains(r.err, "read back and compared: OK"), r.err);  // the human form
    BOOST_TEST(contains(r.err, "size table:"), r.err);
    return doc["reports"]["gguflite.sizes"];
}

// Rows that exercise every path of the quantizers: zeros, NaN, infinities, subnormals, huge
// values whose scale overflows f16, exact ties, and ordinary weights.
std::vector<float> awkward_rows(std::uint64_t rows, std::uint64_t cols, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> w(rows * cols);
    for (std::uint64_t r = 0; r < rows; ++r) {
        float* row = w.data() + r * cols;
        for (std::uint64_t j = 0; j < cols; ++j) {
            float v = normal(rng);
            switch (r % 8) {
                case 1:
                    v = 0.0f;
                    break;
                case 2:
                    v = j % 7 == 3 ? std::numeric_limits<float>::quiet_NaN() : v;
                    break;
                case 3:
                    v = j == 5 ? -std::numeric_limits<float>::infinity() : v;
                    break;
                case 4:
                    v *= 1e-36f;  // scales in f16's subnormal range, and below
                    break;
                case 5:
                    v *= 1e9f;  // scales beyond f16's range
                    break;
                case 6:
                    v = static_cast<float>(static_cast<int>(j % 15) - 7) * 0.5f;  // ties
                    break;
            }
            row[j] = v;
        }
    }
    return w;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguflite_quantization)

BOOST_AUTO_TEST_CASE(micro_llama_q8_matches_the_spec,
                     *utf::precondition(cktest::SharedDataPresent())) {
    auto sizes = check_scheme("q8");
    const double ratio = sizes["ratio_vs_f32"].get<double>();
    BOOST_TEST_MESSAGE("micro-llama q8: " << sizes.dump() << " (" << ratio << "x smaller)");
    BOOST_TEST(ratio > 3.5);
    BOOST_TEST(ratio < 4.0);
}

BOOST_AUTO_TEST_CASE(micro_llama_q4_matches_the_spec,
                     *utf::precondition(cktest::SharedDataPresent())) {
    auto sizes = check_scheme("q4");
    const double ratio = sizes["ratio_vs_f32"].get<double>();
    BOOST_TEST_MESSAGE("micro-llama q4: " << sizes.dump() << " (" << ratio << "x smaller)");
    BOOST_TEST(ratio > 6.0);
    BOOST_TEST(ratio < 7.53);  // 4 / (0.5 + 2/64): the limit with no overhead at all
    BOOST_TEST(sizes["by_dtype"]["Q4_per_group_64"]["tensors"].get<int>() == 16);
    BOOST_TEST(sizes["by_dtype"]["F32"]["tensors"].get<int>() == 5);
}

BOOST_AUTO_TEST_CASE(every_variant_gives_the_reference_bytes) {
    using namespace ckplugin::gguflite;
    std::mt19937 rng(42);
    const Quantizers& scalar = scalar_quantizers();
    const Quantizers& best = select_quantizers(ck::Isa::avx512);
    BOOST_TEST_MESSAGE("quantizer variant under test: " << ck::isa_name(best.isa));
    for (std::uint64_t cols : {64u, 128u, 256u, 4096u}) {
        const std::uint64_t rows = 16;
        const std::vector<float> w = awkward_rows(rows, cols, rng);
        for (std::uint64_t r = 0; r < rows; ++r) {
            const float* row = w.data() + r * cols;
            std::vector<std::int8_t> qa(cols), qb(cols);
            std::vector<float> fa(cols), fb(cols);
            const auto sa = scalar.q8(row, cols, qa.data(), fa.data());
            const auto sb = best.q8(row, cols, qb.data(), fb.data());
            BOOST_TEST(sa == sb, "q8 scale, cols " << cols << " row " << r);
            BOOST_TEST(qa == qb, "q8 values, cols " << cols << " row " << r);
            BOOST_TEST(std::memcmp(fa.data(), fb.data(), cols * 4) == 0);
            std::vector<std::uint16_t> ska(cols / 64), skb(cols / 64);
            std::vector<std::uint8_t> pa(cols / 2), pb(cols / 2);
            scalar.q4(row, cols, ska.data(), pa.data(), fa.data());
            best.q4(row, cols, skb.data(), pb.data(), fb.data());
            BOOST_TEST(ska == skb, "q4 scales, cols " << cols << " row " << r);
            BOOST_TEST(pa == pb, "q4 values, cols " << cols << " row " << r);
            BOOST_TEST(std::memcmp(fa.data(), fb.data(), cols * 4) == 0);
        }
    }
    // Q8 rows need not be a multiple of anything: the vector loop's tail.
    for (std::uint64_t cols : {1u, 7u, 33u, 95u}) {
        const std::vector<float> w = awkward_rows(8, cols, rng);
        for (std::uint64_t r = 0; r < 8; ++r) {
            std::vector<std::int8_t> qa(cols), qb(cols);
            const auto sa = scalar.q8(w.data() + r * cols, cols, qa.data(), nullptr);
            const auto sb = best.q8(w.data() + r * cols, cols, qb.data(), nullptr);
            BOOST_TEST(sa == sb);
            BOOST_TEST(qa == qb, "q8 tail, cols " << cols << " row " << r);
        }
    }
}

BOOST_AUTO_TEST_CASE(quantizer_follows_the_formulas_on_awkward_rows) {
    // The plugin's quantizer (whichever variant runs) against the independent reference, on
    // finite rows (the reference leaves NaN to the plugin's documented rule: NaN -> 0).
    using namespace ckplugin::gguflite;
    std::mt19937 rng(7);
    std::vector<float> w = awkward_rows(16, 256, rng);
    for (float& v : w)
        if (!std::isfinite(v)) v = 0.25f;
    for (const bool q8 : {true, false}) {
        const auto expected =
            q8 ? gltest::reference_q8(w, 16, 256) : gltest::reference_q4(w, 16, 256);
        std::vector<unsigned char> got;
        std::vector<std::uint16_t> scales;
        std::vector<unsigned char> values;
        for (std::uint64_t r = 0; r < 16; ++r) {
            if (q8) {
                std::vector<std::int8_t> q(256);
                scales.push_back(quantize_q8_row(w.data() + r * 256, 256, q.data(), nullptr));
                values.insert(values.end(), q.begin(), q.end());
            } else {
                std::vector<std::uint16_t> s(4);
                std::vector<std::uint8_t> p(128);
                quantize_q4_row(w.data() + r * 256, 256, s.data(), p.data(), nullptr);
                scales.insert(scales.end(), s.begin(), s.end());
                values.insert(values.end(), p.begin(), p.end());
            }
        }
        got.resize(scales.size() * 2);
        ck::le::store_array(got.data(), scales.data(), scales.size());  // host halves to bytes
        got.insert(got.end(), values.begin(), values.end());
        BOOST_TEST(got == expected, (q8 ? "q8" : "q4"));
    }
}

BOOST_AUTO_TEST_CASE(dequantization_is_q_times_the_scale) {
    using namespace ckplugin::gguflite;
    // One Q4 group: scale 0.5 (f16 0x3800); nibbles 0..15 -> 0..7, -8..-1.
    std::vector<std::byte> scale = {std::byte{0x00}, std::byte{0x38}};
    std::vector<std::byte> packed(32);
    for (int j = 0; j < 32; ++j) packed[j] = std::byte(((2 * j) % 16) | (((2 * j + 1) % 16) << 4));
    std::vector<float> out(64);
    dequantize_q4_row(scale.data(), packed.data(), 64, out.data());
    for (int j = 0; j < 64; ++j) {
        const int n = j % 16;
        BOOST_TEST(out[j] == (n >= 8 ? n - 16 : n) * 0.5f, "element " << j);
    }
    std::vector<std::byte> q8 = {std::byte{0x81}, std::byte{0x7f}, std::byte{0x00}};  // -127 127 0
    std::vector<float> out8(3);
    dequantize_q8_row(scale.data(), q8.data(), 3, out8.data());
    BOOST_TEST(out8 == (std::vector<float>{-63.5f, 63.5f, 0.0f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(fake_quantization_is_exact_on_a_quantized_source) {
    // Any dequantizable source: the committed Q4_K_M sample, through q8 and q4.
    for (const std::string scheme : {"q8", "q4", "f16"}) {
        cktest::TempDir dir;
        auto r = gltest::convert("gguf:gguflite[scheme=" + scheme + ",report]", gltest::sample(),
                                 dir / "o.gguflite", {"--json"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        auto doc = nlohmann::json::parse(r.out);
        const auto& round_trip = doc["reports"]["gguflite.round_trip"];
        BOOST_TEST(round_trip["ok"].get<bool>(), scheme);
        BOOST_TEST(round_trip["max_abs_error_vs_fake_quant"].get<double>() == 0.0, scheme);
        BOOST_TEST(round_trip["tensors"].size() == 21u);
        const double source_error = round_trip["max_abs_error_vs_source"].get<double>();
        BOOST_TEST(source_error > 0.0, scheme);  // it did quantize
        BOOST_TEST(source_error < 0.05, scheme);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguflite_quantization
