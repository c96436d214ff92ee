// The SIMD grid quantizers with importance weights (quantize_weighted.hpp's
// weighted_quantizer(isa, type) for IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S: the
// scalar code around SIMD searches) against the scalar weighted quantizer, byte for byte: every
// variant this CPU runs, on
// - the rows of tests/data/weighted/weighted.gguf with their weights and without, one by one
//   (the variant also against ggml's bytes there);
// - random rows of 256 to 4096 values under random weights: groups of values of many kinds
//   (normal and heavy-tailed at scales 1e-6..1e3, zero and constant groups, ties on a small
//   grid, outliers, tiny values around the types' group epsilons, one sign, non-finite values)
//   under weights of many kinds (imatrix-like, spread over decades, zero, half zero, flat, huge
//   among tiny, small integers, infinite or NaN), mixed within a row and each kind alone;
// - ties everywhere: values on a small grid under flat weights, where neighbours and candidate
//   scales fit equally well and the first must win.
// Rows without weights are checked for the types that take them (IQ1_M, IQ2_S, IQ3_XXS, IQ3_S).
// Skipped variants the CPU lacks are reported. A mismatch names the row, block and byte.
#include <boost/test/unit_test.hpp>

#include <algorithm>
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
namespace unity_test_weighted_grid_variants {

namespace {

using ck::GgmlType;
using ck::Isa;
using namespace cktest::kernels;

// Blocks of 256 values.
constexpr WeightedType grid_types[] = {
    {"iq1_s", GgmlType::iq1_s, 50},     {"iq1_m", GgmlType::iq1_m, 56},
    {"iq2_xxs", GgmlType::iq2_xxs, 66}, {"iq2_xs", GgmlType::iq2_xs, 74},
    {"iq2_s", GgmlType::iq2_s, 82},     {"iq3_xxs", GgmlType::iq3_xxs, 98},
    {"iq3_s", GgmlType::iq3_s, 110},
};

bool no_simd() {
    return cktest::kernels::no_x86_simd("grid quantizers");
}

// Quantizes a row of n values (weights w, or nullptr) with the scalar quantizer and with
// every variant, and compares the bytes; a variant must not write past the row's blocks.
void check_row(const WeightedType& k, const float* x, const float* w, std::size_t n,
               const std::string& what) {
    const std::vector<std::byte> want = scalar_weighted_bytes(k, x, w, n);
    for (Isa isa : supported_x86_simd()) check_weighted_variant(isa, k, x, w, n, want, what);
}

// ---- Random rows --------------------------------------------------------------------------

constexpr int value_kinds = 9;
constexpr int weight_kinds = 9;

// A group of n values of kind `kind` (n: 8, 16 or 32, the types' group sizes).
void fill_group(int kind, std::mt19937_64& random, float* x, int n) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::exponential_distribution<float> tail(1.0f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const float scale = std::pow(10.0f, -6.0f + 9.0f * unit(random));  // 1e-6 .. 1e3
    const float inf = std::numeric_limits<float>::infinity();
    for (int i = 0; i < n; ++i) x[i] = scale * normal(random);
    switch (kind) {
        case 0:  // normal
            break;
        case 1:  // heavy-tailed (Laplace)
            for (int i = 0; i < n; ++i) x[i] = scale * (random() % 2 ? 1 : -1) * tail(random);
            break;
        case 2:  // zero, -0 or a constant
            std::fill(x, x + n, pick(random, {0.0f, -0.0f, scale, -scale}));
            break;
        case 3: {  // ties: small integers times a power of two
            const float step = std::ldexp(1.0f, static_cast<int>(random() % 20) - 10);
            for (int i = 0; i < n; ++i)
                x[i] = step * static_cast<float>(static_cast<int>(random() % 9) - 4);
            break;
        }
        case 4:  // one outlier
            x[random() % static_cast<unsigned>(n)] *= pick(random, {30.0f, -1e4f, 1e19f, 3e38f});
            break;
        case 5:  // tiny: around the group epsilons 1e-15, 1e-12, 1e-8, 1e-7, or subnormal
            for (int i = 0; i < n; ++i)
                x[i] = pick(random, {1e-15f, 1e-12f, 1e-8f, 1e-7f, 1e-40f}) * normal(random);
            break;
        case 6: {  // one sign
            const float sign = random() % 2 ? 1.0f : -1.0f;
            for (int i = 0; i < n; ++i) x[i] = sign * std::fabs(x[i]);
            break;
        }
        case 7:  // a non-finite value
            x[random() % static_cast<unsigned>(n)] =
                pick(random, {inf, -inf, std::numeric_limits<float>::quiet_NaN()});
            break;
        default:  // values near the same magnitude, signs mixed (parity fixes)
            for (int i = 0; i < n; ++i) x[i] = scale * (1.0f + 0.01f * normal(random));
            for (int i = 0; i < n; ++i)
                if (random() % 2) x[i] = -x[i];
            break;
    }
}

// A group of n weights of kind `kind` (imatrix entries are mean squares: >= 0).
void fill_weight_group(int kind, std::mt19937_64& random, float* w, int n) {
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    switch (kind) {
        case 0:  // imatrix-like, 1e-3 .. 1e3
            for (int i = 0; i < n; ++i) w[i] = std::pow(10.0f, -3.0f + 6.0f * unit(random));
            break;
        case 1:  // over decades, 1e-10 .. 1e10
            for (int i = 0; i < n; ++i) w[i] = std::pow(10.0f, -10.0f + 20.0f * unit(random));
            break;
        case 2:  // zero
            std::fill(w, w + n, 0.0f);
            break;
        case 3:  // half zero
            for (int i = 0; i < n; ++i) w[i] = random() % 2 ? unit(random) : 0.0f;
            break;
        case 4:  // flat
            std::fill(w, w + n, pick(random, {1.0f, 0.25f, 1e-20f, 1e20f}));
            break;
        case 5:  // huge among tiny
            for (int i = 0; i < n; ++i) w[i] = 1e-30f * unit(random);
            w[random() % static_cast<unsigned>(n)] = pick(random, {1e10f, 1e30f, 3e38f});
            break;
        case 6:  // small integers (ties in the weighted sums)
            for (int i = 0; i < n; ++i) w[i] = static_cast<float>(random() % 3);
            break;
        case 7:  // an infinite weight, or a NaN
            for (int i = 0; i < n; ++i) w[i] = unit(random);
            w[random() % static_cast<unsigned>(n)] = random() % 4
                                                         ? std::numeric_limits<float>::infinity()
                                                         : std::numeric_limits<float>::quiet_NaN();
            break;
        default:  // one weight per group
            std::fill(w, w + n, 0.0f);
            w[random() % static_cast<unsigned>(n)] = 1.0f + unit(random);
            break;
    }
}

// `values` values and weights in groups of 8, 16 or 32, each group of a random kind, or of kind
// only_values / only_weights when those are >= 0.
ValuesAndWeights random_values(std::uint64_t seed, std::size_t values, int only_values = -1,
                               int only_weights = -1) {
    std::mt19937_64 random(seed);
    ValuesAndWeights r{std::vector<float>(values), std::vector<float>(values)};
    for (std::size_t at = 0; at < values;) {
        const int n = std::min(8 << (random() % 3), static_cast<int>(values - at));
        const int xk = only_values >= 0 ? only_values : static_cast<int>(random() % value_kinds);
        const int wk = only_weights >= 0 ? only_weights : static_cast<int>(random() % weight_kinds);
        fill_group(xk, random, r.x.data() + at, n);
        fill_weight_group(wk, random, r.w.data() + at, n);
        at += static_cast<std::size_t>(n);
    }
    return r;
}

// r cut into rows of 256, 512, 1024 and 4096 values in turn, each with its weights and (for
// the types that take none) without.
void check_rows(const ValuesAndWeights& r, const std::string& what) {
    const std::size_t lengths[] = {256, 512, 1024, 4096};
    for (const WeightedType& k : grid_types) {
        const bool plain = !ck::kernels::quantizer_requires_weights(id(k.type));
        std::size_t at = 0;
        for (std::size_t i = 0; at < r.x.size(); ++i) {
            const std::size_t n = std::min(lengths[i % 4], r.x.size() - at);
            const std::string where = what + " at " + std::to_string(at);
            check_row(k, r.x.data() + at, r.w.data() + at, n, where);
            if (plain) check_row(k, r.x.data() + at, nullptr, n, where);
            at += n;
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(weighted_grid_variants)

BOOST_AUTO_TEST_CASE(dispatch) {
    for (const WeightedType& k : grid_types) check_weighted_dispatch(k);
}

// The 24 rows of weighted.gguf (512 values each), with their weights and without, one by one
// (a grid quantizer's super-block sees its own values only): the variant against the scalar
// quantizer and against ggml's bytes.
BOOST_AUTO_TEST_CASE(same_as_scalar_and_ggml_on_the_weighted_data) {
    if (no_simd()) return;
    TestGguf ref(weighted_gguf());
    const ValuesAndWeights rows = weighted_rows(ref);
    constexpr std::size_t cols = 512;
    for (const WeightedType& k : grid_types)
        for (const bool weighted : {true, false}) {
            const std::string variant = weighted ? "weighted" : "plain";
            ck::TensorView ggml;
            if (!ref.find(std::string(k.name) + "." + variant, ggml)) {
                BOOST_TEST(ck::kernels::quantizer_requires_weights(id(k.type)));
                continue;
            }
            const std::size_t row_bytes = cols / 256 * k.block_bytes;
            BOOST_TEST_REQUIRE(ggml.size() == rows.x.size() / cols * row_bytes);
            for (std::size_t r = 0; r < rows.x.size() / cols; ++r) {
                const float* x = rows.x.data() + r * cols;
                const float* w = weighted ? rows.w.data() + r * cols : nullptr;
                const std::string what = "weighted.gguf row " + std::to_string(r);
                check_row(k, x, w, cols, what);
                for (Isa isa : supported_x86_simd())
                    check_weighted_against_ggml(isa, k, x, w, cols, ggml.data() + r * row_bytes,
                                                what);
            }
        }
}

BOOST_AUTO_TEST_CASE(same_as_scalar_on_random_rows) {
    if (no_simd()) return;
    check_rows(random_values(20260130, 96 * 256), "mixed groups");
    for (int kind = 0; kind < value_kinds; ++kind)
        check_rows(random_values(100 + static_cast<std::uint64_t>(kind), 8 * 256, kind),
                   "values of kind " + std::to_string(kind));
    for (int kind = 0; kind < weight_kinds; ++kind)
        check_rows(random_values(200 + static_cast<std::uint64_t>(kind), 8 * 256, -1, kind),
                   "weights of kind " + std::to_string(kind));
}

// Ties everywhere: values on a small grid under flat or small-integer weights.
BOOST_AUTO_TEST_CASE(same_as_scalar_on_ties) {
    if (no_simd()) return;
    for (int weights : {4, 6})
        check_rows(random_values(300 + static_cast<std::uint64_t>(weights), 8 * 256, 3, weights),
                   "ties under weights of kind " + std::to_string(weights));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_weighted_grid_variants
