// The SIMD quantizers with importance weights (quantize_weighted.hpp's weighted_quantizer(isa,
// type): one block of a row per lane, 256 values, 32 for IQ4_NL) against the scalar weighted
// quantizer, byte for byte: every variant this CPU runs, for Q2_K..Q6_K, IQ4_NL and IQ4_XS
// (NEON: Q2_K, Q4_K and Q5_K), on
// - the rows of tests/data/weighted/weighted.gguf with their weights, and without, joined into
//   one row so that whole lane groups run (these types quantize each block from its own values
//   and weights alone), also against ggml's bytes there;
// - rows of 64 random blocks with random weights: values of many distributions (normal at
//   scales 1e-6..1e3, zero sub-blocks and blocks, outliers, constants, ties, subnormals, one
//   sign, non-finite values) under weights of many (imatrix-like, spread over decades, zero,
//   half zero, flat, huge among tiny, one per sub-block, small-integer ties, infinite), each
//   block of its own kinds so that neighbouring lanes take different paths, and each kind
//   alone;
// - every row length from 1 to 33 blocks, so every tail length of both lane counts runs.
// Skipped variants the CPU lacks are reported. A mismatch names the row, block and byte.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "kernel_test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_weighted_kquant_variants {

namespace {

using ck::GgmlType;
using ck::Isa;
using namespace cktest::kernels;

constexpr WeightedType simd_types[] = {
    {"q2_K", GgmlType::q2_k, 84, 256},      {"q3_K", GgmlType::q3_k, 110, 256},
    {"q4_K", GgmlType::q4_k, 144, 256},     {"q5_K", GgmlType::q5_k, 176, 256},
    {"q6_K", GgmlType::q6_k, 210, 256},     {"iq4_nl", GgmlType::iq4_nl, 18, 32},
    {"iq4_xs", GgmlType::iq4_xs, 136, 256},
};

bool no_simd() {
    return cktest::kernels::no_simd("weighted quantizers");
}

// Quantizes one row of n values (weights w, or nullptr) with the variant and with the scalar
// quantizer and compares the bytes; the variant must not write past the row's blocks.
bool check_row(Isa isa, const WeightedType& k, const float* x, const float* w, std::size_t n,
               const std::string& what) {
    return check_weighted_variant(isa, k, x, w, n, scalar_weighted_bytes(k, x, w, n), what);
}

// ---- Random rows --------------------------------------------------------------------------

constexpr int value_kinds = 10;
constexpr int weight_kinds = 10;

// 256 values of kind `kind`.
void fill_values(int kind, std::mt19937_64& random, float* x) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const float scale = std::pow(10.0f, -6.0f + 9.0f * unit(random));  // 1e-6 .. 1e3
    for (int i = 0; i < 256; ++i) x[i] = scale * normal(random);
    const float inf = std::numeric_limits<float>::infinity();
    switch (kind) {
        case 0:  // plain normal
            break;
        case 1:  // some sub-blocks (of 16) all zero
            for (int j = 0; j < 16; ++j)
                if (random() % 3 == 0) std::fill(x + 16 * j, x + 16 * j + 16, 0.0f);
            break;
        case 2:  // all zero or -0
            std::fill(x, x + 256, random() % 2 ? 0.0f : -0.0f);
            break;
        case 3:  // one huge outlier
            x[random() % 256] *= pick(random, {1e2f, -1e4f, 1e8f, -1e19f, 1e30f, 3e38f});
            break;
        case 4:  // constant sub-blocks of 16 (some zero)
            for (int j = 0; j < 16; ++j)
                std::fill(x + 16 * j, x + 16 * j + 16,
                          random() % 4 ? scale * normal(random) : 0.0f);
            break;
        case 5: {  // ties: small integers and halves times a power of two
            const float step = std::ldexp(0.5f, static_cast<int>(random() % 20) - 10);
            for (int i = 0; i < 256; ++i)
                x[i] = step * static_cast<float>(static_cast<int>(random() % 33) - 16);
            break;
        }
        case 6:  // subnormals and values near GROUP_MAX_EPS
            for (int i = 0; i < 256; ++i) x[i] = (random() % 2 ? 1e-40f : 1e-15f) * normal(random);
            break;
        case 7:  // one sign only, maybe shifted away from 0
            for (int i = 0; i < 256; ++i)
                x[i] = std::fabs(x[i]) + (random() % 2 ? 3.0f * scale : 0);
            if (random() % 2)
                for (int i = 0; i < 256; ++i) x[i] = -x[i];
            break;
        case 8:  // a non-finite value
            x[random() % 256] = pick(random, {inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                                              std::numeric_limits<float>::max()});
            break;
        default:  // per sub-block mixture of the above
            mix_sub_blocks(fill_values, random, x);
            break;
    }
}

// 256 weights of kind `kind` (imatrix entries are mean squares: >= 0).
void fill_weights(int kind, std::mt19937_64& random, float* w) {
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    switch (kind) {
        case 0:  // imatrix-like: 1e-3 .. 1e3
            for (int i = 0; i < 256; ++i) w[i] = std::pow(10.0f, -3.0f + 6.0f * unit(random));
            break;
        case 1:  // spread over decades 1e-10 .. 1e10
            for (int i = 0; i < 256; ++i) w[i] = std::pow(10.0f, -10.0f + 20.0f * unit(random));
            break;
        case 2:  // all zero
            std::fill(w, w + 256, 0.0f);
            break;
        case 3:  // half zero, some sub-blocks all zero
            for (int i = 0; i < 256; ++i) w[i] = random() % 2 ? unit(random) : 0.0f;
            for (int j = 0; j < 16; ++j)
                if (random() % 4 == 0) std::fill(w + 16 * j, w + 16 * j + 16, 0.0f);
            break;
        case 4:  // flat
            std::fill(w, w + 256, pick(random, {1.0f, 0.25f, 3.0f, 1e-20f, 1e20f}));
            break;
        case 5:  // a few huge among tiny
            for (int i = 0; i < 256; ++i) w[i] = 1e-30f * unit(random);
            for (int i = 0; i < 4; ++i)
                w[random() % 256] = pick(random, {1e10f, 1e30f, 3e38f, 1e-45f});
            break;
        case 6:  // one nonzero per sub-block of 16
            std::fill(w, w + 256, 0.0f);
            for (int j = 0; j < 16; ++j) w[16 * j + random() % 16] = unit(random);
            break;
        case 7:  // small integers: ties in the weighted sums
            for (int i = 0; i < 256; ++i) w[i] = static_cast<float>(random() % 4);
            break;
        case 8:  // an infinite weight, rarely a NaN
            for (int i = 0; i < 256; ++i) w[i] = unit(random);
            w[random() % 256] = random() % 8 ? std::numeric_limits<float>::infinity()
                                             : std::numeric_limits<float>::quiet_NaN();
            break;
        default:  // per sub-block mixture of the above
            mix_sub_blocks(fill_weights, random, w);
            break;
    }
}

// `blocks` blocks of values and their weights; each block of a random kind of each, or of kind
// only_values / only_weights when those are >= 0.
ValuesAndWeights random_rows(std::uint64_t seed, std::size_t blocks, int only_values = -1,
                             int only_weights = -1) {
    std::mt19937_64 random(seed);
    ValuesAndWeights r{std::vector<float>(blocks * 256), std::vector<float>(blocks * 256)};
    for (std::size_t b = 0; b < blocks; ++b) {
        const int xk = only_values >= 0 ? only_values : static_cast<int>(random() % value_kinds);
        const int wk = only_weights >= 0 ? only_weights : static_cast<int>(random() % weight_kinds);
        fill_values(xk, random, r.x.data() + 256 * b);
        fill_weights(wk, random, r.w.data() + 256 * b);
    }
    return r;
}

// Every row of 64 blocks (16384 values, a real row width) of r, with weights, and the first
// without.
void check_rows(const ValuesAndWeights& r, const std::string& what) {
    constexpr std::size_t row = 64 * 256;
    for (const WeightedType& k : simd_types)
        for (Isa isa : quantizer_variants(k.type)) {
            for (std::size_t at = 0; at + row <= r.x.size(); at += row)
                check_row(isa, k, r.x.data() + at, r.w.data() + at, row,
                          what + " row " + std::to_string(at / row));
            check_row(isa, k, r.x.data(), nullptr, row, what);
        }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(weighted_kquant_variants)

BOOST_AUTO_TEST_CASE(dispatch) {
    using namespace ck::kernels;
    for (const WeightedType& k : simd_types) {
        BOOST_TEST(has_own_weighted_quantizer(Isa::scalar, id(k.type)));
        check_weighted_dispatch(k);
    }
    // No quantizer at all: nothing to dispatch to.
    for (GgmlType t : {GgmlType::f32, GgmlType::q8_0}) {
        BOOST_TEST(!has_own_weighted_quantizer(Isa::avx512, id(t)));
        BOOST_TEST(weighted_quantizer(Isa::avx512, id(t)) == nullptr);
    }
    BOOST_TEST_MESSAGE("best weighted variant: " << ck::isa_name(chosen_isa()));
}

// The 24 rows of weighted.gguf (512 values each) joined into one row, with their weights and
// without: the variant against the scalar quantizer and against ggml's bytes.
BOOST_AUTO_TEST_CASE(same_as_scalar_and_ggml_on_the_weighted_data) {
    if (no_simd()) return;
    TestGguf ref(weighted_gguf());
    const ValuesAndWeights rows = weighted_rows(ref);
    const std::vector<float>& src = rows.x;
    for (const WeightedType& k : simd_types)
        for (const bool weighted : {true, false}) {
            const float* w = weighted ? rows.w.data() : nullptr;
            const std::string variant = weighted ? "weighted" : "plain";
            ck::TensorView ggml;
            BOOST_TEST_REQUIRE(ref.find(std::string(k.name) + "." + variant, ggml));
            const std::size_t bytes = src.size() / k.block_values * k.block_bytes;
            BOOST_TEST_REQUIRE(ggml.size() == bytes);
            for (Isa isa : quantizer_variants(k.type)) {
                check_row(isa, k, src.data(), w, src.size(), "weighted.gguf");
                check_weighted_against_ggml(isa, k, src.data(), w, src.size(), ggml.data(),
                                            "weighted.gguf");
            }
        }
}

BOOST_AUTO_TEST_CASE(same_as_scalar_on_random_rows) {
    if (no_simd()) return;
    check_rows(random_rows(20260130, 4 * 64), "mixed blocks");
    for (int kind = 0; kind < value_kinds; ++kind)
        check_rows(random_rows(100 + static_cast<std::uint64_t>(kind), 64, kind),
                   "values of kind " + std::to_string(kind));
    for (int kind = 0; kind < weight_kinds; ++kind)
        check_rows(random_rows(200 + static_cast<std::uint64_t>(kind), 64, -1, kind),
                   "weights of kind " + std::to_string(kind));
}

// Ties everywhere: small-integer values under flat or small-integer weights, all lanes alike.
BOOST_AUTO_TEST_CASE(same_as_scalar_on_ties) {
    if (no_simd()) return;
    for (int weights : {4, 7})
        check_rows(random_rows(300 + static_cast<std::uint64_t>(weights), 64, 5, weights),
                   "ties under weights of kind " + std::to_string(weights));
}

// 1 .. 33 blocks: every tail length for 8 and 16 lanes, and rows shorter than a lane group.
BOOST_AUTO_TEST_CASE(tails_use_the_scalar_quantizer) {
    if (no_simd()) return;
    const ValuesAndWeights r = random_rows(4242, 40);
    for (std::size_t blocks = 1; blocks <= 33; ++blocks)
        for (const WeightedType& k : simd_types)
            for (Isa isa : quantizer_variants(k.type)) {
                const std::size_t at = 256 * (blocks % 7);
                const std::string what = std::to_string(blocks) + " blocks";
                check_row(isa, k, r.x.data() + at, r.w.data() + at, blocks * k.block_values, what);
                check_row(isa, k, r.x.data() + at, nullptr, blocks * k.block_values, what);
            }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_weighted_kquant_variants
