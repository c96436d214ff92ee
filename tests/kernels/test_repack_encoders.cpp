// The Int8 and NF4 encoders of docs/formats/repack-blocks.md on vectors worked out by hand:
// constant blocks, ties, extremes, outliers, and the element order of Q4_0 (llama.cpp's, not "two
// per byte").
#include <boost/test/unit_test.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ck/kernels/dequant.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/repack.hpp"
#include "ck/support/little_endian.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_repack_encoders {

namespace {

using ck::kernels::nf4_codebook;

constexpr std::uint16_t f16_one = 0x3c00;

struct Int8Result {
    std::array<std::uint8_t, 128> codes{};
    std::array<std::uint16_t, 2> min_max{};
};

Int8Result encode_int8(const std::array<float, 128>& v) {
    Int8Result r;
    ck::kernels::encode_int8_block(v.data(), r.codes.data(), r.min_max.data());
    return r;
}

struct Nf4Result {
    std::array<std::uint8_t, 32> packed{};
    std::uint16_t absmax = 0;
    std::uint8_t index(std::size_t i) const { return (packed[i / 2] >> (i % 2 ? 4 : 0)) & 15; }
};

Nf4Result encode_nf4(const std::array<float, 64>& v) {
    Nf4Result r;
    ck::kernels::encode_nf4_block(v.data(), r.packed.data(), &r.absmax);
    return r;
}

float from_bits(std::uint32_t bits) {
    return std::bit_cast<float>(bits);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(repack_encoders)

BOOST_AUTO_TEST_CASE(int8_constant_block_codes_zero) {
    std::array<float, 128> v;
    v.fill(0.75f);
    const Int8Result r = encode_int8(v);
    // 0.75 is 0x3a00 in f16; max == min, so every code is 0 and decodes to min exactly.
    BOOST_TEST(r.min_max[0] == 0x3a00u);
    BOOST_TEST(r.min_max[1] == 0x3a00u);
    for (std::uint8_t c : r.codes) BOOST_TEST(c == 0u);
    BOOST_TEST(ck::kernels::decode_int8(0, r.min_max[0], r.min_max[1]) == 0.75f);
}

BOOST_AUTO_TEST_CASE(int8_min_equal_to_max_after_f16_rounding) {
    // 1.0 and 1.0002 differ in f32 but both round to f16 1.0 (the f16 step at 1 is 2^-10):
    // the stored min equals the stored max, so every code is 0 even though the values differ.
    std::array<float, 128> v;
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = i % 2 ? 1.0002f : 1.0f;
    const Int8Result r = encode_int8(v);
    BOOST_TEST(r.min_max[0] == f16_one);
    BOOST_TEST(r.min_max[1] == f16_one);
    for (std::uint8_t c : r.codes) BOOST_TEST(c == 0u);
}

BOOST_AUTO_TEST_CASE(int8_half_way_rounds_away_from_zero) {
    // min 0 and max 255 are exact in f16, so t = v / 255 and y = t * 255. For v = k + 0.5 the
    // f32 quotient rounds so that y is k + 0.5 again, exactly: 2.5 / 255 = 0x3c20a0a1 and
    // 0x3c20a0a1 * 255 = 2.5. Half way goes up: 2.5 -> 3 (round-half-even would give 2),
    // 4.5 -> 5, 0.5 -> 1, 254.5 -> 255, 127.5 -> 128 (t = 0.5 exactly).
    std::array<float, 128> v{};
    v[1] = 255.0f;
    const float halves[] = {2.5f, 4.5f, 0.5f, 254.5f, 127.5f};
    const std::uint8_t expected[] = {3, 5, 1, 255, 128};
    for (std::size_t i = 0; i < 5; ++i) v[2 + i] = halves[i];
    BOOST_TEST(std::bit_cast<std::uint32_t>(2.5f / 255.0f) == 0x3c20a0a1u);
    BOOST_TEST(from_bits(0x3c20a0a1) * 255.0f == 2.5f);
    const Int8Result r = encode_int8(v);
    BOOST_TEST(r.min_max[0] == 0x0000u);
    BOOST_TEST(r.min_max[1] == 0x5bf8u);  // 255 = 1.9921875 * 2^7
    BOOST_TEST(r.codes[0] == 0u);
    BOOST_TEST(r.codes[1] == 255u);
    for (std::size_t i = 0; i < 5; ++i)
        BOOST_TEST(r.codes[2 + i] == expected[i], "v = " << halves[i]);
}

BOOST_AUTO_TEST_CASE(int8_just_below_half_stays_down) {
    // With min 0 and max 1, y = v * 255. For v = 0x3b008080 (0.0019607842), y is 0x3effffff =
    // 0.49999997: the code is 0. The shortcut floor(y + 0.5) would give 1, because
    // 0.49999997 + 0.5 rounds to 1.0 in f32.
    std::array<float, 128> v{};
    v[1] = 1.0f;
    v[2] = from_bits(0x3b008080);
    BOOST_TEST(std::bit_cast<std::uint32_t>(v[2] * 255.0f) == 0x3effffffu);
    BOOST_TEST(std::floor(v[2] * 255.0f + 0.5f) == 1.0f);
    const Int8Result r = encode_int8(v);
    BOOST_TEST(r.codes[2] == 0u);
}

BOOST_AUTO_TEST_CASE(int8_extreme_values) {
    // +-65504 is the largest f16: min 0xfbff, max 0x7bff, range 131008. 0 is exactly half way
    // (t = 0.5, y = 127.5 -> 128); the ends map to 0 and 255.
    std::array<float, 128> v{};
    v[0] = -65504.0f;
    v[1] = 65504.0f;
    v[2] = 0.0f;
    Int8Result r = encode_int8(v);
    BOOST_TEST(r.min_max[0] == 0xfbffu);
    BOOST_TEST(r.min_max[1] == 0x7bffu);
    BOOST_TEST(r.codes[0] == 0u);
    BOOST_TEST(r.codes[1] == 255u);
    BOOST_TEST(r.codes[2] == 128u);

    // Clamping: the stored min/max are rounded, so values can fall outside them. The max 6e-8
    // rounds to the smallest f16 subnormal 2^-24 = 5.96e-8, so t = 6e-8 / 2^-24 = 1.0066 is
    // clamped to 1 (code 255). The min -1.0001 rounds up to -1 (0xbc00): t < 0 -> code 0.
    v.fill(0.0f);
    v[5] = 6e-8f;
    r = encode_int8(v);
    BOOST_TEST(r.min_max[0] == 0x0000u);
    BOOST_TEST(r.min_max[1] == 0x0001u);
    BOOST_TEST(r.codes[5] == 255u);
    BOOST_TEST(r.codes[0] == 0u);
    v.fill(0.5f);
    v[7] = -1.0001f;
    r = encode_int8(v);
    BOOST_TEST(r.min_max[0] == 0xbc00u);
    BOOST_TEST(r.codes[7] == 0u);
    BOOST_TEST(r.codes[0] == 255u);
}

BOOST_AUTO_TEST_CASE(int8_nan_takes_no_part_and_negative_zero_min_is_stored_as_zero) {
    std::array<float, 128> v;
    v.fill(-0.0f);
    v[3] = std::numeric_limits<float>::quiet_NaN();
    v[9] = 1.0f;
    const Int8Result r = encode_int8(v);
    BOOST_TEST(r.min_max[0] == 0x0000u);  // not 0x8000
    BOOST_TEST(r.min_max[1] == f16_one);
    BOOST_TEST(r.codes[3] == 0u);  // NaN encodes as 0
    BOOST_TEST(r.codes[9] == 255u);
}

BOOST_AUTO_TEST_CASE(nf4_ties_pick_the_higher_index) {
    // Where the f32 distances to two neighbours are equal, the higher index wins (web-rwkv's GPU
    // rule). Midpoints that are exact ties in f32: between entries 2|3, 6|7, 7|8, 9|10, 11|12
    // and 13|14 (checked below). A 1.0 in the block makes the absmax 1, so x = v.
    for (int j : {2, 6, 7, 9, 11, 13}) {
        const float mid = (nf4_codebook[j] + nf4_codebook[j + 1]) / 2;
        BOOST_TEST_REQUIRE(std::fabs(nf4_codebook[j] - mid) ==
                           std::fabs(nf4_codebook[j + 1] - mid));
        std::array<float, 64> v;
        v.fill(mid);
        v[0] = 1.0f;
        const Nf4Result r = encode_nf4(v);
        BOOST_TEST(r.absmax == f16_one);
        BOOST_TEST(r.index(0) == 15u);
        for (std::size_t i = 1; i < 64; ++i) BOOST_TEST(r.index(i) == unsigned(j + 1), "tie " << j);
        BOOST_TEST(ck::kernels::nf4_nearest(mid) == j + 1);
    }
    // Half of entry 8 is an exact tie between 0 (entry 7) and entry 8: 8 wins.
    BOOST_TEST(ck::kernels::nf4_nearest(nf4_codebook[8] / 2) == 8);
    BOOST_TEST(ck::kernels::nf4_nearest(nf4_codebook[6] / 2) == 7);
}

BOOST_AUTO_TEST_CASE(nf4_all_zero_block_is_index_7) {
    std::array<float, 64> v{};
    const Nf4Result r = encode_nf4(v);
    BOOST_TEST(r.absmax == 0u);
    for (std::uint8_t b : r.packed) BOOST_TEST(b == 0x77u);
    // Values too small for f16 give an absmax of 0 as well.
    v.fill(1e-9f);
    BOOST_TEST(encode_nf4(v).absmax == 0u);
    BOOST_TEST(encode_nf4(v).packed[0] == 0x77u);
}

BOOST_AUTO_TEST_CASE(nf4_one_large_outlier) {
    // 62 values of 0.01, +100 at element 5 and -100 at element 10: absmax f16(100) = 0x5640
    // exactly; 0.01 / 100 = 1e-4 is nearest to 0.0 (index 7); +-1 are indices 15 and 0.
    std::array<float, 64> v;
    v.fill(0.01f);
    v[5] = 100.0f;
    v[10] = -100.0f;
    const Nf4Result r = encode_nf4(v);
    BOOST_TEST(r.absmax == 0x5640u);
    BOOST_TEST(r.packed[2] == 0xf7u);  // element 4 low (7), element 5 high (15)
    BOOST_TEST(r.packed[5] == 0x70u);  // element 10 low (0), element 11 high (7)
    for (std::size_t j : {0, 1, 3, 4, 6, 31}) BOOST_TEST(r.packed[j] == 0x77u, "byte " << j);
    BOOST_TEST(ck::kernels::decode_nf4(15, r.absmax) == 100.0f);
    BOOST_TEST(ck::kernels::decode_nf4(0, r.absmax) == -100.0f);
}

BOOST_AUTO_TEST_CASE(nf4_thresholds_agree_with_the_literal_rule) {
    // The kernels count thresholds instead of comparing 16 distances. Every float near each
    // midpoint (+-4096 ulps), the specials, and a million random values in [-1, 1] must get the
    // index of the literal rule. They go through blocks whose absmax is exactly 1 (element 0),
    // so x = v.
    std::vector<float> xs = {0.0f,   -0.0f,   1.0f,   -1.0f,
                             1e-30f, -1e-30f, 1e-45f, std::numeric_limits<float>::quiet_NaN()};
    for (int j = 0; j < 15; ++j) {
        const float mid = (nf4_codebook[j] + nf4_codebook[j + 1]) / 2;
        const auto bits = std::bit_cast<std::int32_t>(mid);
        for (std::int32_t d = -4096; d <= 4096; ++d) xs.push_back(std::bit_cast<float>(bits + d));
    }
    std::mt19937 random(6);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int i = 0; i < 1000000; ++i) xs.push_back(uniform(random));
    std::size_t mismatches = 0;
    std::array<float, 64> v;
    for (std::size_t i = 0; i < xs.size(); i += 63) {
        v[0] = 1.0f;
        for (std::size_t k = 1; k < 64; ++k) v[k] = i + k - 1 < xs.size() ? xs[i + k - 1] : 0.0f;
        const Nf4Result r = encode_nf4(v);
        BOOST_TEST_REQUIRE(r.absmax == f16_one);
        for (std::size_t k = 1; k < 64; ++k) {
            const float x = v[k];
            if (r.index(k) != ck::kernels::nf4_nearest(x) && ++mismatches < 10)
                BOOST_ERROR("x = " << x << " (0x" << std::hex << std::bit_cast<std::uint32_t>(x)
                                   << std::dec << "): index " << int(r.index(k)) << ", rule says "
                                   << int(ck::kernels::nf4_nearest(x)));
        }
    }
    BOOST_TEST(mismatches == 0u);
    // x beyond +-1: the absmax 1.0004 rounds down to f16 1.0, so x = +-1.0004 -> entries 15, 0.
    v.fill(0.0f);
    v[0] = 1.0004f;
    v[1] = -1.0004f;
    const Nf4Result r = encode_nf4(v);
    BOOST_TEST(r.absmax == f16_one);
    BOOST_TEST(r.packed[0] == 0x0fu);
    BOOST_TEST(ck::kernels::nf4_nearest(std::numeric_limits<float>::infinity()) == 15);
    BOOST_TEST(ck::kernels::nf4_nearest(std::numeric_limits<float>::quiet_NaN()) == 0);
}

BOOST_AUTO_TEST_CASE(nf4_nibble_order_is_two_per_byte) {
    // NF4 (unlike Q4_0) packs flat elements 2j and 2j+1 into byte j, low nibble first.
    std::array<float, 64> v{};
    v[0] = -1.0f;  // index 0
    v[1] = 1.0f;   // index 15
    v[62] = 1.0f;  // index 15
    const Nf4Result r = encode_nf4(v);
    BOOST_TEST(r.packed[0] == 0xf0u);
    BOOST_TEST(r.packed[31] == 0x7fu);
}

BOOST_AUTO_TEST_CASE(q4_0_is_decoded_in_llama_cpp_element_order) {
    // Two Q4_0 blocks (64 elements, one NF4 block). In llama.cpp byte j of a Q4_0 block holds
    // element j in its low nibble and element j+16 in its high nibble. A Q4_0 block has only 16
    // distinct values, so the blocks are built so that every element differs from the ones a
    // wrong order would put there: block 0 has q = j - 8 at element j and 7 - j at j + 16 (d 1),
    // block 1 the mirror image (d 0.5). An all-0x88 block could not tell the orders apart.
    std::vector<std::byte> blocks(2 * 18);
    const std::uint16_t d0 = f16_one, d1 = 0x3800;  // 1.0 and 0.5
    ck::le::store(blocks.data(), d0);
    ck::le::store(blocks.data() + 18, d1);
    for (int j = 0; j < 16; ++j) {
        blocks[2 + j] = std::byte(j | (15 - j) << 4);
        blocks[20 + j] = std::byte((15 - j) | j << 4);
    }
    // By hand: the absmax is 8 (element 0 of block 0, q = -8, d = 1), so x = q * d / 8.
    // Nearest entries for x = q/8, q = -8..7 (block 0) and x = q/16 (block 1, d = 0.5):
    const int block0[16] = {0, 0, 1, 1, 2, 3, 4, 6, 7, 9, 10, 11, 12, 13, 14, 15};
    const int block1[16] = {2, 3, 3, 4, 4, 5, 6, 6, 7, 8, 9, 9, 10, 11, 11, 12};
    int expected_index[64];
    for (int j = 0; j < 16; ++j) {
        expected_index[j] = block0[j];            // q = j - 8
        expected_index[16 + j] = block0[15 - j];  // q = 7 - j
        expected_index[32 + j] = block1[15 - j];  // q = 7 - j
        expected_index[48 + j] = block1[j];       // q = j - 8
    }
    std::uint8_t expected[32];
    for (int j = 0; j < 32; ++j)
        expected[j] = std::uint8_t(expected_index[2 * j] | expected_index[2 * j + 1] << 4);

    std::uint8_t packed[32];
    std::uint16_t absmax = 0;
    ck::kernels::RepackError error;
    ck::kernels::scalar_repack_table().to_nf4[2](blocks.data(), 64, packed, &absmax, error);
    BOOST_TEST(absmax == 0x4800u);  // 8.0
    for (int j = 0; j < 32; ++j)
        BOOST_TEST(packed[j] == expected[j], "byte " << j << ": 0x" << std::hex << int(packed[j])
                                                     << ", expected 0x" << int(expected[j]));
    // And the elements really are in llama.cpp's order: the dequantizer (bit-exact to ggml)
    // gives the values the expectation above was built from.
    float values[64];
    ck::kernels::scalar_dequant_table().fn[2](blocks.data(), values, 64);
    BOOST_TEST(values[1] == -7.0f);
    BOOST_TEST(values[17] == 6.0f);
    BOOST_TEST(values[33] == 3.0f);
}

BOOST_AUTO_TEST_CASE(decode_of_encode_is_within_one_code_step) {
    std::mt19937 random(66);
    std::normal_distribution<float> gaussian(0.0f, 0.02f);
    for (int round = 0; round < 2000; ++round) {
        std::array<float, 128> v;
        for (float& x : v) x = gaussian(random);
        const Int8Result r = encode_int8(v);
        const float mn = ck::kernels::f16_to_f32(r.min_max[0]);
        const float mx = ck::kernels::f16_to_f32(r.min_max[1]);
        const float step = (mx - mn) / 255;
        for (std::size_t i = 0; i < v.size(); ++i) {
            const float y = ck::kernels::decode_int8(r.codes[i], r.min_max[0], r.min_max[1]);
            BOOST_TEST(std::fabs(y - v[i]) <= step, "int8 " << v[i] << " -> " << y);
        }
        std::array<float, 64> w;
        std::copy(v.begin(), v.begin() + 64, w.begin());
        const Nf4Result n = encode_nf4(w);
        const float a = ck::kernels::f16_to_f32(n.absmax);
        for (std::size_t i = 0; i < w.size(); ++i) {
            // x lies between the neighbours of its entry: no other entry is a step closer.
            const int k = n.index(i);
            const float x = w[i] / a;
            const float below = k > 0 ? nf4_codebook[k - 1] : -1.001f;
            const float above = k < 15 ? nf4_codebook[k + 1] : 1.001f;
            BOOST_TEST((below <= x && x <= above), "nf4 " << x << " -> entry " << k);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_repack_encoders
