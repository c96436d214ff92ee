// ck::parse_byte_size: the one reading of sizes (--max-memory, the gguf writer's
// split_max_size), decision 0044: bytes, K/M/G/T as the caller's bare unit says, KB/MB/GB/TB
// powers of 1000, KiB/MiB/GiB/TiB powers of 1024, case ignored; nothing else.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "ck/byte_size.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_byte_size {

using ck::BareUnit;
using ck::parse_byte_size;

// The bytes `text` reads as, 0 when it is refused (a size is at least one byte).
std::uint64_t bytes(const char* text, BareUnit bare) {
    return parse_byte_size(text, bare).value_or(0);
}

BOOST_AUTO_TEST_SUITE(byte_size)

BOOST_AUTO_TEST_CASE(plain_numbers_are_bytes_in_both_readings) {
    for (BareUnit bare : {BareUnit::binary, BareUnit::decimal}) {
        BOOST_TEST(bytes("5000000", bare) == 5'000'000u);
        BOOST_TEST(bytes("1", bare) == 1u);
        BOOST_TEST(bytes("7B", bare) == 7u);
        BOOST_TEST(bytes("18446744073709551615", bare) ==
                   std::numeric_limits<std::uint64_t>::max());
    }
}

BOOST_AUTO_TEST_CASE(a_bare_letter_is_the_callers_unit_a_named_one_is_its_own) {
    BOOST_TEST(bytes("100K", BareUnit::binary) == 102'400u);
    BOOST_TEST(bytes("2G", BareUnit::binary) == (2ull << 30));
    BOOST_TEST(bytes("2G", BareUnit::decimal) == 2'000'000'000u);
    BOOST_TEST(bytes("500M", BareUnit::decimal) == 500'000'000u);
    for (BareUnit bare : {BareUnit::binary, BareUnit::decimal}) {
        BOOST_TEST(bytes("2GB", bare) == 2'000'000'000u);
        BOOST_TEST(bytes("2gb", bare) == 2'000'000'000u);
        BOOST_TEST(bytes("2GiB", bare) == (2ull << 30));
        BOOST_TEST(bytes("3kib", bare) == 3072u);
        BOOST_TEST(bytes("1TB", bare) == 1'000'000'000'000u);
        BOOST_TEST(bytes("1TiB", bare) == (1ull << 40));
    }
}

BOOST_AUTO_TEST_CASE(fractions_are_exact_and_drop_a_fraction_of_a_byte) {
    BOOST_TEST(bytes("1.5T", BareUnit::binary) == (3ull << 39));
    BOOST_TEST(bytes("0.5K", BareUnit::binary) == 512u);
    BOOST_TEST(bytes("1.5GB", BareUnit::decimal) == 1'500'000'000u);
    BOOST_TEST(bytes("2.9", BareUnit::binary) == 2u);
}

BOOST_AUTO_TEST_CASE(anything_else_is_refused) {
    for (BareUnit bare : {BareUnit::binary, BareUnit::decimal})
        for (const char* bad : {"",
                                "0",
                                "0M",
                                "0.5",
                                "M",
                                "-1",
                                "+5M",
                                " 5M",
                                "5M ",
                                "5 M",
                                "5X",
                                "5MiBs",
                                "5iB",
                                "1e400",
                                "1e3",
                                "5.",
                                ".5M",
                                "5.M",
                                "0x10",
                                "18446744073709551616",
                                "99999999999999999999M"})
            BOOST_TEST(!parse_byte_size(bad, bare).has_value(), "'" << bad << "'");
}

BOOST_AUTO_TEST_CASE(the_forms_name_the_bare_units_reading) {
    BOOST_TEST(ck::byte_size_forms(BareUnit::binary).find("K, M, G, T: powers of 1024") !=
               std::string::npos);
    BOOST_TEST(ck::byte_size_forms(BareUnit::decimal).find("K, M, G, T: powers of 1000") !=
               std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_byte_size
