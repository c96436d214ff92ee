// The one JSON string writer (ck::support::append_json_string) in its three styles, and the
// display quoting of metadata strings: both judge UTF-8 by ck::utf8, so overlong forms and
// surrogates are never passed through as text (the hand-written decoders they replace did).
#include <boost/test/unit_test.hpp>

#include "ck/metadata.hpp"
#include "ck/support/json_string.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_json_string {

using ck::support::json_string;
using ck::support::JsonEscape;

BOOST_AUTO_TEST_SUITE(json_string_writer)

BOOST_AUTO_TEST_CASE(utf8_style) {
    BOOST_TEST(json_string("a\"b\\c\n\r\t\b\f\x01\x7f") ==
               "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\x7f\"");
    BOOST_TEST(json_string("caf\xc3\xa9 \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    std::string out;
    // Overlong '/', a UTF-16 surrogate, a lone continuation byte: each byte becomes U+FFFD.
    BOOST_TEST(ck::support::append_json_string(out, "\xc0\xaf|\xed\xa0\x80|\x80"));
    BOOST_TEST(out ==
               "\"\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\"");
    out.clear();
    BOOST_TEST(!ck::support::append_json_string(out, "fine"));
}

BOOST_AUTO_TEST_CASE(utf8_short_escapes_only_style) {
    BOOST_TEST(json_string("\b\f\n", JsonEscape::utf8_short_escapes_only) ==
               "\"\\u0008\\u000c\\n\"");
}

BOOST_AUTO_TEST_CASE(ascii_style_is_pythons_json_dumps) {
    // json.dumps("é😀\x7f\b") == '"\\u00e9\\ud83d\\ude00\\u007f\\b"'
    BOOST_TEST(json_string("\xc3\xa9\xf0\x9f\x98\x80\x7f\b", JsonEscape::ascii) ==
               "\"\\u00e9\\ud83d\\ude00\\u007f\\b\"");
    BOOST_TEST(json_string("\xe2\x82\xac", JsonEscape::ascii) == "\"\\u20ac\"");
    // A byte that is not well-formed UTF-8 is escaped on its own.
    BOOST_TEST(json_string("\xc0\xaf", JsonEscape::ascii) == "\"\\u00c0\\u00af\"");
}

BOOST_AUTO_TEST_CASE(display_quoting_rejects_overlong_and_surrogates) {
    BOOST_TEST(ck::Value::of_string("\xc0\xaf").to_display() == "\"\\xc0\\xaf\"");
    BOOST_TEST(ck::Value::of_string("\xed\xa0\x80").to_display() == "\"\\xed\\xa0\\x80\"");
    BOOST_TEST(ck::Value::of_string("caf\xc3\xa9").to_display() == "\"caf\xc3\xa9\"");
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_json_string
