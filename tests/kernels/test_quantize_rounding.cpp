// quantize_row_q8_0 rounds x * id half away from zero, as ggml's roundf does, without calling
// roundf. Checked against roundf itself on every f32 from -127.5 to 127.5 whose bit pattern is a
// multiple of 61 (about 35 million values), on every exact half and on the floats beside each.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ck/kernels/quantize.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_rounding {

namespace {

// One Q8_0 block per 31 values: element 0 is 127, so amax = 127, d = 1, id = 1 and the codes
// are exactly round(value).
std::size_t mismatches(const std::vector<float>& values) {
    std::size_t bad = 0;
    std::vector<float> block(32);
    std::byte out[34];
    for (std::size_t i = 0; i < values.size(); i += 31) {
        block.assign(32, 0.0f);
        block[0] = 127.0f;
        for (std::size_t j = 0; j < 31 && i + j < values.size(); ++j) block[1 + j] = values[i + j];
        ck::kernels::quantize_row_q8_0(block.data(), out, 32);
        for (std::size_t j = 0; j < 32; ++j) {
            const auto expected = static_cast<std::int8_t>(std::roundf(block[j]));
            bad += static_cast<std::int8_t>(out[2 + j]) != expected;
        }
    }
    return bad;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_rounding)

BOOST_AUTO_TEST_CASE(q8_0_rounds_like_roundf) {
    std::vector<float> values;
    for (int k = -253; k <= 253; ++k) {  // every half -126.5 ... 126.5 and its neighbours
        const float half = static_cast<float>(k) / 2.0f;
        values.push_back(half);
        values.push_back(std::nextafter(half, -1000.0f));
        values.push_back(std::nextafter(half, 1000.0f));
    }
    for (std::uint64_t bits = 0; bits < 0x100000000ull; bits += 61) {
        const auto b = static_cast<std::uint32_t>(bits);
        float v;
        std::memcpy(&v, &b, sizeof v);
        if (std::fabs(v) <= 127.0f) values.push_back(v);
        if (values.size() >= (1u << 22)) {
            BOOST_TEST_REQUIRE(mismatches(values) == 0u);
            values.clear();
        }
    }
    BOOST_TEST(mismatches(values) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_quantize_rounding
