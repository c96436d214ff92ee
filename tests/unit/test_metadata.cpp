// Typed metadata values: exact bits, ordering, lazy arrays.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/metadata.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_metadata {

BOOST_AUTO_TEST_SUITE(metadata)

BOOST_AUTO_TEST_CASE(scalars_keep_their_bits) {
    auto nan = ck::Value::scalar(ck::ValueType::f32, 0x7fc00001u);  // a NaN with a payload
    BOOST_TEST(nan.raw() == 0x7fc00001u);
    BOOST_TEST(std::isnan(*nan.as_f32()));
    BOOST_TEST(ck::Value::of_i32(-5).as_int().value() == -5);
    BOOST_TEST(!ck::Value::of_i32(-5).as_uint().has_value());
    BOOST_TEST(ck::Value::scalar(ck::ValueType::i8, 0x80).as_int().value() == -128);
    BOOST_TEST(ck::Value::of_u64(UINT64_MAX).as_uint().value() == UINT64_MAX);
    BOOST_TEST(!ck::Value::of_u64(UINT64_MAX).as_int().has_value());
    BOOST_TEST(ck::Value::of_f32(1e-5f).to_display() == "9.99999975e-06");
    BOOST_TEST(ck::Value::of_string("a\"b\n").to_display() == "\"a\\\"b\\n\"");
    BOOST_TEST(ck::Value::of_string("\xff").to_display() == "\"\\xff\"");  // invalid UTF-8 escaped
}

BOOST_AUTO_TEST_CASE(order_set_erase) {
    ck::Metadata m;
    m.set("b", ck::Value::of_u32(1));
    m.set("a", ck::Value::of_u32(2));
    m.set("b", ck::Value::of_u32(3));  // replaced in place
    BOOST_TEST(m.size() == 2u);
    BOOST_TEST(m.entries()[0].first == "b");
    BOOST_TEST(m.find("b")->raw() == 3u);
    BOOST_TEST(!m.insert("a", ck::Value::of_u32(9)));
    BOOST_TEST(m.erase("b"));
    BOOST_TEST(m.find("a")->raw() == 2u);
    BOOST_TEST(m.find("b") == nullptr);
}

BOOST_AUTO_TEST_CASE(arrays) {
    std::vector<std::string> words = {"", "a", "h\xc3\xa9llo"};
    auto strings = ck::ArrayValue::of_strings(std::span<const std::string>(words));
    BOOST_TEST(strings.size() == 3u);
    BOOST_TEST(strings.string_at(2) == words[2]);
    BOOST_CHECK_THROW(strings.string_at(3), ck::Error);
    std::vector<std::string> seen;
    strings.for_each_string([&](std::string_view s) {
        seen.emplace_back(s);
        return true;
    });
    BOOST_TEST(seen == words);

    std::vector<std::int32_t> ints = {-1, 7};
    auto a = ck::ArrayValue::of<std::int32_t>(ck::ValueType::i32, ints);
    BOOST_TEST(a.raw_at(0) == 0xffffffffu);
    BOOST_TEST(a.raw_at(1) == 7u);
    auto v = ck::Value::of_array(a);
    BOOST_TEST(v.to_display() == "[i32 x 2] [-1, 7]");
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_metadata
