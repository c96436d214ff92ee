// ck::le: tensor bytes are little-endian on every host. These check the bytes each helper
// writes and the values it reads back, so they fail on any host where a helper would store or
// load in host order (the suite runs on x86-64 and, under qemu, on aarch64 and s390x).
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "ck/metadata.hpp"
#include "ck/support/little_endian.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_little_endian {

namespace {

template <std::size_t N>
std::array<unsigned, N> unsigned_bytes(const std::byte (&b)[N]) {
    std::array<unsigned, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = std::to_integer<unsigned>(b[i]);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(little_endian)

BOOST_AUTO_TEST_CASE(store_writes_the_low_byte_first) {
    std::byte b[4];
    ck::le::store(b, std::uint32_t{0x01020304});
    BOOST_TEST((unsigned_bytes(b) == std::array<unsigned, 4>{4, 3, 2, 1}));
    std::byte h[2];
    ck::le::store(h, std::uint16_t{0x3c00});  // f16 1.0
    BOOST_TEST((unsigned_bytes(h) == std::array<unsigned, 2>{0x00, 0x3c}));
    std::byte f[4];
    ck::le::store(f, 1.0f);  // 0x3f800000
    BOOST_TEST((unsigned_bytes(f) == std::array<unsigned, 4>{0x00, 0x00, 0x80, 0x3f}));
}

BOOST_AUTO_TEST_CASE(load_reads_what_store_wrote_at_any_offset) {
    std::byte b[11] = {};
    ck::le::store(b + 3, -2.5);
    BOOST_TEST(ck::le::load<double>(b + 3) == -2.5);
    ck::le::store(b + 1, std::int16_t{-2});
    BOOST_TEST(std::to_integer<unsigned>(b[1]) == 0xfeu);
    BOOST_TEST(ck::le::load<std::int16_t>(b + 1) == -2);
}

BOOST_AUTO_TEST_CASE(arrays_round_trip_through_little_endian_bytes) {
    const std::vector<float> values = {1.0f, -0.5f, 3.25f};
    std::vector<std::byte> bytes(values.size() * 4);
    ck::le::store_array(bytes.data(), values.data(), values.size());
    BOOST_TEST(std::to_integer<unsigned>(bytes[3]) == 0x3fu);  // 1.0f's top byte last
    BOOST_TEST(std::to_integer<unsigned>(bytes[7]) == 0xbfu);  // -0.5f's sign byte
    std::vector<float> back(values.size());
    ck::le::load_array(bytes.data(), back.data(), back.size());
    BOOST_TEST(back == values);
    // in_place turns host values into their bytes and back, the same reversal either way.
    std::vector<float> copy = values;
    ck::le::in_place(copy.data(), copy.size());
    BOOST_TEST(std::memcmp(copy.data(), bytes.data(), bytes.size()) == 0);
    ck::le::in_place(copy.data(), copy.size());
    BOOST_TEST(copy == values);
}

BOOST_AUTO_TEST_CASE(metadata_arrays_of_host_values_are_stored_little_endian) {
    const std::vector<std::int32_t> ids = {1, -1, 0x01020304};
    const ck::ArrayValue a =
        ck::ArrayValue::of(ck::ValueType::i32, std::span<const std::int32_t>(ids));
    const auto e = a.encoded();
    BOOST_REQUIRE(e.size() == 12);
    BOOST_TEST(std::to_integer<unsigned>(e[0]) == 1u);
    BOOST_TEST(std::to_integer<unsigned>(e[8]) == 4u);
    BOOST_TEST(std::to_integer<unsigned>(e[11]) == 1u);
    BOOST_TEST(a.raw_at(2) == 0x01020304u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_little_endian
