// The reference quantizers of Q4_1, Q5_0, Q5_1, IQ4_NL, TQ1_0 and TQ2_0 against ggml's bytes.
//
// The ground truth is tests/data/types/: types.gguf holds, per ggml type, a 1024x8 tensor that
// ggml quantized (ggml_quantize_chunk, no importance matrix) from <name>.src.f32. Its rows cover
// N(0,1), N(0,0.02), outliers, an all-zero row, per-group scales from 1e-6 to 1e2 (with a
// constant group, an all-negative group and a group with a single nonzero value), values on a
// 1/8 grid (ties), ternary values and N(3,1); see manifest.json. Each row is quantized here and
// compared byte for byte.
//
// The hand-made rows further down are a sanity check only (dequantize, compare within the
// type's error); ggml's bytes are the reference.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
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
namespace unity_test_quantize_legacy {

namespace fs = std::filesystem;

namespace {

using QuantizeFn = void (*)(const float*, std::byte*, std::size_t);

struct LegacyType {
    const char* name;  // tensor name in types.gguf and file stem
    ck::GgmlType type;
    QuantizeFn quantize;
};

const LegacyType legacy_types[] = {
    {"q4_1", ck::GgmlType::q4_1, ck::kernels::quantize_row_q4_1},
    {"q5_0", ck::GgmlType::q5_0, ck::kernels::quantize_row_q5_0},
    {"q5_1", ck::GgmlType::q5_1, ck::kernels::quantize_row_q5_1},
    {"iq4_nl", ck::GgmlType::iq4_nl, ck::kernels::quantize_row_iq4_nl},
    {"tq1_0", ck::GgmlType::tq1_0, ck::kernels::quantize_row_tq1_0},
    {"tq2_0", ck::GgmlType::tq2_0, ck::kernels::quantize_row_tq2_0},
};

const ck::TypeInfo& info_of(ck::GgmlType type) {
    const ck::TypeInfo* info = ck::find_type(type);
    BOOST_TEST_REQUIRE(info != nullptr);
    return *info;
}

fs::path types_dir() {
    return cktest::test_data() / "types";
}

// Quantizes `x` (n elements) into exactly n / block_size blocks; fails the test if the
// quantizer writes past them (a guard zone after the output must stay untouched).
std::vector<std::byte> quantize(const LegacyType& t, const float* x, std::size_t n) {
    const ck::TypeInfo& info = info_of(t.type);
    const std::size_t size = n / info.block_size * info.block_bytes;
    constexpr std::size_t guard = 64;
    std::vector<std::byte> out(size + guard, std::byte{0xa5});
    t.quantize(x, out.data(), n);
    const bool guard_intact =
        std::all_of(out.begin() + static_cast<std::ptrdiff_t>(size), out.end(),
                    [](std::byte b) { return b == std::byte{0xa5}; });
    BOOST_TEST(guard_intact, t.name << " wrote past its " << n / info.block_size << " blocks");
    out.resize(size);
    return out;
}

// Empty when equal; otherwise where the first difference is: block, byte within the block,
// both values, and how many blocks differ.
std::string first_difference(const std::vector<std::byte>& got, const std::byte* want,
                             std::size_t block_bytes) {
    if (std::memcmp(got.data(), want, got.size()) == 0) return {};
    std::size_t first = got.size(), blocks = 0;
    for (std::size_t b = 0; b < got.size(); b += block_bytes) {
        if (std::memcmp(got.data() + b, want + b, block_bytes) == 0) continue;
        ++blocks;
        if (first != got.size()) continue;
        for (std::size_t i = b; i < b + block_bytes; ++i) {
            if (got[i] != want[i]) {
                first = i;
                break;
            }
        }
    }
    std::ostringstream s;
    s << "block " << first / block_bytes << ", byte " << first % block_bytes << ": got 0x"
      << std::hex << static_cast<unsigned>(got[first]) << ", ggml 0x"
      << static_cast<unsigned>(want[first]) << std::dec << " (" << blocks << " of "
      << got.size() / block_bytes << " blocks differ)";
    return s.str();
}

std::vector<float> dequantize(ck::GgmlType type, const std::vector<std::byte>& blocks,
                              std::size_t n) {
    const ck::kernels::DequantFn fn =
        ck::kernels::scalar_dequant_table().fn[static_cast<std::uint32_t>(type)];
    BOOST_TEST_REQUIRE(fn != nullptr);
    std::vector<float> out(n);
    fn(blocks.data(), out.data(), n);
    return out;
}

// The worst error a block of `x` may come back with: a function of the block's values.
using Tolerance = std::function<float(const float* block, std::size_t size)>;

float block_amax(const float* x, std::size_t size) {
    float amax = 0.0f;
    for (std::size_t j = 0; j < size; ++j) amax = std::max(amax, std::fabs(x[j]));
    return amax;
}

float block_range(const float* x, std::size_t size) {
    const auto [lo, hi] = std::minmax_element(x, x + size);
    return *hi - *lo;
}

// The error of storing v as f16: half an ulp, 2^-11 relative for normal values, 2^-25 absolute
// below 2^-14 (subnormal halves: a tiny block's scale loses most of its bits).
float f16_error(float v) {
    return std::fabs(v) / 2048.0f + 0x1p-25f;
}

// Quantizes `row`, dequantizes it with the project's scalar kernel, and checks every element
// against the block's tolerance. A sanity check of the layout and the rounding, not of ggml
// exactness (that is the types.gguf test).
void check_round_trip(const LegacyType& t, const std::vector<float>& row, const Tolerance& tol) {
    const std::size_t bs = info_of(t.type).block_size;
    BOOST_TEST_REQUIRE(row.size() % bs == 0u);
    const std::vector<float> back =
        dequantize(t.type, quantize(t, row.data(), row.size()), row.size());
    for (std::size_t b = 0; b < row.size() / bs; ++b) {
        const float limit = tol(row.data() + b * bs, bs);
        for (std::size_t j = b * bs; j < (b + 1) * bs; ++j) {
            const float err = std::fabs(back[j] - row[j]);
            BOOST_TEST(err <= limit, t.name << " block " << b << " element " << j - b * bs << ": "
                                            << row[j] << " came back as " << back[j] << " (error "
                                            << err << " > " << limit << ")");
        }
    }
}

const LegacyType& type_named(const std::string& name) {
    for (const LegacyType& t : legacy_types)
        if (name == t.name) return t;
    BOOST_FAIL("no such type " << name);
    return legacy_types[0];
}

// Blocks of 32 that force the scale and code edges: all equal (positive, negative, zero), the
// extreme value negative, a single outlier among small values, a block straddling zero with a
// tiny spread, a 1/8 grid (exact halves after scaling), and a huge/tiny scale.
std::vector<float> edge_row32() {
    std::vector<float> row;
    auto add = [&row](const std::function<float(int)>& f) {
        for (int j = 0; j < 32; ++j) row.push_back(f(j));
    };
    add([](int) { return 0.75f; });
    add([](int) { return -2.5f; });
    add([](int) { return 0.0f; });
    add([](int j) { return j == 5 ? -9.0f : 0.25f * static_cast<float>(j % 7) - 0.5f; });
    add([](int j) { return -3.0f - 0.1f * static_cast<float>(j); });  // all negative, max < 0
    add([](int j) { return j == 31 ? 40.0f : 0.01f * static_cast<float>(j - 16); });
    add([](int j) { return 1e-3f * static_cast<float>(j % 5 - 2); });
    add([](int j) { return static_cast<float>(j - 16) / 8.0f; });
    add([](int j) { return 3e4f * std::sin(static_cast<float>(j)); });
    add([](int j) { return 2e-5f * std::cos(static_cast<float>(j)); });
    return row;
}

// Blocks of 256 for the ternary types: exact ternary values (+-a, 0), all zero, a single
// outlier, values right at +-a/2 (lroundf's halves, away from zero), and uniform noise.
std::vector<float> edge_row256() {
    std::vector<float> row;
    auto add = [&row](const std::function<float(int)>& f) {
        for (int j = 0; j < 256; ++j) row.push_back(f(j));
    };
    add([](int j) { return 0.625f * static_cast<float>(j % 3 - 1); });
    add([](int) { return 0.0f; });
    add([](int j) { return j == 200 ? -7.0f : 0.001f * static_cast<float>(j % 9 - 4); });
    add([](int j) { return j == 0 ? 2.0f : (j % 2 ? 1.0f : -1.0f); });  // exactly +-amax/2
    add([](int j) { return std::sin(0.37f * static_cast<float>(j)); });
    return row;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_legacy)

// Every row of every type's tensor in types.gguf, quantized here, equals ggml's bytes. The
// message names each type, row and first differing block/byte, and the final check lists all
// types that differ.
BOOST_AUTO_TEST_CASE(every_row_matches_ggml_byte_for_byte) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(types_dir() / "types.gguf");

    std::vector<std::string> failed;
    for (const LegacyType& t : legacy_types) {
        BOOST_TEST_CONTEXT("type " << t.name) {
            const ck::TypeInfo& info = info_of(t.type);
            std::size_t index = header.tensors.size();
            for (std::size_t i = 0; i < header.tensors.size(); ++i)
                if (header.tensors[i].name == t.name) index = i;
            BOOST_TEST_REQUIRE(index < header.tensors.size(), "no tensor " << t.name);
            const ck::TensorInfo& tensor = header.tensors[index];
            BOOST_TEST_REQUIRE(tensor.type == static_cast<std::uint32_t>(t.type));
            BOOST_TEST_REQUIRE(tensor.ne.size() == 2u);

            const auto cols = static_cast<std::size_t>(tensor.ne[0]);
            const auto rows = static_cast<std::size_t>(tensor.ne[1]);
            const std::size_t row_bytes = cols / info.block_size * info.block_bytes;
            const ck::TensorView view = reader.tensor(index);
            BOOST_TEST_REQUIRE(view.size() == rows * row_bytes);
            const std::vector<float> src =
                cktest::read_floats(types_dir() / (std::string(t.name) + ".src.f32"));
            BOOST_TEST_REQUIRE(src.size() == rows * cols);

            bool type_ok = true;
            for (std::size_t r = 0; r < rows; ++r) {
                const std::vector<std::byte> got = quantize(t, src.data() + r * cols, cols);
                const std::string problem =
                    first_difference(got, view.data() + r * row_bytes, info.block_bytes);
                BOOST_TEST(problem.empty(), t.name << " row " << r << ": " << problem);
                type_ok = type_ok && problem.empty();
            }
            // Quantizing all rows in one call gives the same bytes (blocks never span rows).
            const std::vector<std::byte> all = quantize(t, src.data(), src.size());
            const std::string whole = first_difference(all, view.data(), info.block_bytes);
            BOOST_TEST(whole.empty(), t.name << " whole tensor: " << whole);
            if (!type_ok || !whole.empty()) failed.push_back(t.name);
        }
    }
    std::string list;
    for (const auto& name : failed) list += " " + name;
    BOOST_TEST(failed.empty(), "types that differ from ggml:" << list);
}

// Q8_0 of a block of tiny values (largest magnitude 1e-38: d = max / 127 is subnormal and 1 / d
// overflows to infinity): every code 0 and d 0, as ggml's reference gives on x86, with no
// infinity or NaN converted to an integer (UBSan in the sanitizer tree; found by
// fuzz_lora_adapter).
BOOST_AUTO_TEST_CASE(q8_0_of_a_subnormal_block_is_zero) {
    std::vector<float> x(32, 0.0f);
    x[0] = 1e-38f;
    x[5] = -3e-39f;
    std::byte out[34];
    std::memset(out, 0xff, sizeof out);
    ck::kernels::quantize_row_q8_0(x.data(), out, x.size());
    for (std::size_t i = 0; i < sizeof out; ++i) BOOST_TEST(static_cast<int>(out[i]) == 0, i);
}

// Q4_1: codes 0..15 over [min, max]; half a step of error, plus the f16 rounding of d and m.
BOOST_AUTO_TEST_CASE(q4_1_edge_blocks_round_trip) {
    check_round_trip(type_named("q4_1"), edge_row32(), [](const float* x, std::size_t n) {
        const float amax = block_amax(x, n);
        const float d = block_range(x, n) / 15.0f;
        return 0.5f * d * 1.001f + 15.0f * f16_error(d) + f16_error(amax);
    });
}

// Q5_0: the signed extreme maps to -16 steps, so the opposite extreme can clamp at +15: one
// step of error at worst.
BOOST_AUTO_TEST_CASE(q5_0_edge_blocks_round_trip) {
    check_round_trip(type_named("q5_0"), edge_row32(), [](const float* x, std::size_t n) {
        const float d = block_amax(x, n) / 16.0f;
        return d * 1.001f + 16.0f * f16_error(d);
    });
}

// Q5_1: codes 0..31 over [min, max].
BOOST_AUTO_TEST_CASE(q5_1_edge_blocks_round_trip) {
    check_round_trip(type_named("q5_1"), edge_row32(), [](const float* x, std::size_t n) {
        const float amax = block_amax(x, n);
        const float d = block_range(x, n) / 31.0f;
        return 0.5f * d * 1.001f + 31.0f * f16_error(d) + f16_error(amax);
    });
}

// IQ4_NL: 16 non-uniform levels from -127 to 113 steps; the widest gap is 24 steps and the
// least-squares scale is near amax / 120, so about an eighth of amax at worst. An all-zero
// block comes back as zeros (d = 0).
BOOST_AUTO_TEST_CASE(iq4_nl_edge_blocks_round_trip) {
    const LegacyType& t = type_named("iq4_nl");
    const std::vector<float> row = edge_row32();
    check_round_trip(t, row, [](const float* x, std::size_t n) {
        const float amax = block_amax(x, n);
        return 0.125f * amax + 127.0f * f16_error(amax / 120.0f);
    });
    // The all-zero block (the third): scale 0, every code the index of the level nearest 0.
    const std::vector<std::byte> q = quantize(t, row.data() + 64, 32);
    BOOST_TEST(static_cast<unsigned>(q[0]) == 0u);
    BOOST_TEST(static_cast<unsigned>(q[1]) == 0u);
    for (std::size_t j = 2; j < q.size(); ++j) BOOST_TEST(static_cast<unsigned>(q[j]) == 0x88u);
}

// The ternary types: +-d or 0 with d = amax, so half of amax at worst, and exact ternary input
// comes back exactly up to the f16 rounding of d.
void check_ternary(const LegacyType& t) {
    const std::vector<float> row = edge_row256();
    check_round_trip(t, row, [](const float* x, std::size_t n) {
        const float amax = block_amax(x, n);
        return 0.5f * amax + f16_error(amax);
    });
    const std::vector<float> back = dequantize(t.type, quantize(t, row.data(), 256), 256);
    for (std::size_t j = 0; j < 256; ++j)
        BOOST_TEST(back[j] == row[j], t.name << " element " << j);  // 0.625 is exact in f16
    // Halves round away from zero: +-1 with amax 2 are +-0.5 after scaling, so +-d.
    const std::vector<float> halves = dequantize(t.type, quantize(t, row.data() + 768, 256), 256);
    for (std::size_t j = 1; j < 256; ++j) BOOST_TEST(halves[j] == 2.0f * row[768 + j]);
}

BOOST_AUTO_TEST_CASE(tq1_0_edge_blocks_round_trip) {
    check_ternary(type_named("tq1_0"));
}

BOOST_AUTO_TEST_CASE(tq2_0_edge_blocks_round_trip) {
    check_ternary(type_named("tq2_0"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_quantize_legacy
