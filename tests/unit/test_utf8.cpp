// ck::invalid_utf8_at / utf8_sequence_length: well-formed UTF-8 as JSON parsers judge it.
#include <boost/test/unit_test.hpp>

#include "ck/utf8.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_utf8 {

BOOST_AUTO_TEST_SUITE(utf8)

BOOST_AUTO_TEST_CASE(well_formed_text_passes) {
    for (std::string_view s : {"", "plain ascii", "caf\xc3\xa9", "\xe2\x82\xac euro",
                               "\xf0\x9f\x98\x80", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf"})
        BOOST_TEST(!ck::invalid_utf8_at(s).has_value(), s);
    BOOST_TEST(ck::utf8_sequence_length("a", 0) == 1u);
    BOOST_TEST(ck::utf8_sequence_length("\xc3\xa9", 0) == 2u);
    BOOST_TEST(ck::utf8_sequence_length("\xe2\x82\xac", 0) == 3u);
    BOOST_TEST(ck::utf8_sequence_length("\xf0\x9f\x98\x80", 0) == 4u);
}

BOOST_AUTO_TEST_CASE(each_kind_of_malformed_byte_is_found_where_it_starts) {
    struct Case {
        std::string_view text;
        std::size_t at;
    };
    for (const Case& c : {
             Case{"ab\x80", 2},            // a lone continuation byte
             Case{"\xc0\xaf", 0},          // overlong (C0, C1 never start a sequence)
             Case{"x\xe0\x80\xaf", 1},     // overlong three-byte form
             Case{"\xf0\x8f\xbf\xbf", 0},  // overlong four-byte form
             Case{"ok\xed\xa0\x80", 2},    // a UTF-16 surrogate
             Case{"\xf4\x90\x80\x80", 0},  // past U+10FFFF
             Case{"\xf5\x80\x80\x80", 0},  // F5..FF never start a sequence
             Case{"abc\xe2\x82", 3},       // cut short by the end
             Case{"\xe2\x28\xa1", 0},      // a continuation byte missing
         }) {
        const auto found = ck::invalid_utf8_at(c.text);
        BOOST_TEST_REQUIRE(found.has_value());
        BOOST_TEST(*found == c.at);
        BOOST_TEST(ck::utf8_sequence_length(c.text, c.at) == 0u);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_utf8
