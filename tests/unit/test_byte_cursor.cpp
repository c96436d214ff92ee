// ck::support::ByteCursor: fields in either byte order, and every way of running off the end
// reported with the file, the byte offset and the subject.
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstring>
#include <vector>

#include "ck/error.hpp"
#include "ck/support/byte_cursor.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_byte_cursor {

using ck::support::ByteCursor;
using ck::support::ByteOrder;

namespace {

std::vector<std::byte> bytes_of(std::initializer_list<unsigned> values) {
    std::vector<std::byte> out;
    for (unsigned v : values) out.push_back(static_cast<std::byte>(v));
    return out;
}

// Runs `f`, which must throw ck::Error, and returns the error.
template <class F>
ck::Error error_of(F&& f) {
    try {
        f();
    } catch (const ck::Error& e) {
        return e;
    }
    BOOST_FAIL("no ck::Error thrown");
    return ck::Error("unreachable");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(byte_cursor)

BOOST_AUTO_TEST_CASE(little_endian_fields_in_order) {
    const auto data = bytes_of({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
                                0x0c, 0x0d, 0x0e, 0x0f, 0xff});
    ByteCursor in(data, "f.bin");
    BOOST_TEST((in.byte_order() == ByteOrder::little));
    BOOST_TEST(in.read<std::uint8_t>("a") == 0x01u);
    BOOST_TEST(in.read<std::uint16_t>("b") == 0x0302u);
    BOOST_TEST(in.peek<std::uint8_t>("c") == 0x04u);
    BOOST_TEST(in.pos() == 3u);
    BOOST_TEST(in.read<std::uint32_t>("c") == 0x07060504u);
    BOOST_TEST(in.read<std::uint64_t>("d") == 0x0f0e0d0c0b0a0908ull);
    BOOST_TEST(in.read<std::int8_t>("e") == -1);
    BOOST_TEST(in.remaining() == 0u);
}

BOOST_AUTO_TEST_CASE(big_endian_fields_and_switching_order) {
    const auto data = bytes_of({0x00, 0x00, 0x00, 0x03, 0xff, 0xfe, 0x03, 0x00, 0x00, 0x00});
    ByteCursor in(data, "f.bin", ByteOrder::big);
    BOOST_TEST(in.read<std::uint32_t>("version") == 3u);
    BOOST_TEST(in.read<std::int16_t>("v") == -2);
    in.set_byte_order(ByteOrder::little);
    BOOST_TEST(in.read<std::uint32_t>("version") == 3u);
}

BOOST_AUTO_TEST_CASE(floats_in_both_orders) {
    std::array<std::byte, 4> le{}, be{};
    const float f = 1.5f;
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);  // 0x3fc00000
    for (int i = 0; i < 4; ++i) {
        le[i] = static_cast<std::byte>(bits >> (8 * i));
        be[3 - i] = static_cast<std::byte>(bits >> (8 * i));
    }
    BOOST_TEST(ByteCursor(le, "le").read<float>("f") == 1.5f);
    BOOST_TEST(ByteCursor(be, "be", ByteOrder::big).read<float>("f") == 1.5f);
}

BOOST_AUTO_TEST_CASE(reading_past_the_end_names_file_offset_and_subject) {
    const auto data = bytes_of({1, 2, 3, 4, 5, 6});
    ByteCursor in(data, "model.gguf");
    in.read<std::uint32_t>("the version");
    const ck::Error e = error_of([&] { in.read<std::uint64_t>("the tensor count", "n_tensors"); });
    BOOST_TEST(e.message() == "file ends inside the tensor count (needs 8 bytes, 2 remain)");
    BOOST_TEST(e.file() == "model.gguf");
    BOOST_TEST(e.offset().value_or(99) == 4u);
    BOOST_TEST(e.subject() == "n_tensors");
    BOOST_TEST(in.pos() == 4u);  // a failed read does not move
}

BOOST_AUTO_TEST_CASE(bytes_skip_and_seek_are_bounded) {
    const auto data = bytes_of({'a', 'b', 'c', 'd', 'e'});
    ByteCursor in(data, "x");
    BOOST_TEST(in.chars(2, "a name") == "ab");
    BOOST_TEST(in.bytes(1, "a byte").size() == 1u);
    const ck::Error e = error_of([&] { in.chars(3, "the tensor name", "tensor 0"); });
    BOOST_TEST(e.message() == "file ends inside the tensor name (needs 3 bytes, 2 remain)");
    BOOST_TEST(e.offset().value_or(99) == 3u);
    BOOST_TEST(e.subject() == "tensor 0");
    BOOST_CHECK_THROW(in.skip(3, "padding"), ck::Error);
    in.skip(2, "padding");
    BOOST_TEST(in.remaining() == 0u);
    in.seek(1, "the table");
    BOOST_TEST(in.read<std::uint8_t>("b") == 'b');
    const ck::Error s = error_of([&] { in.seek(9, "the table", "table"); });
    BOOST_TEST(s.message() == "file ends before the table (at byte 9, the file has 5 bytes)");
    BOOST_TEST(s.offset().value_or(99) == 5u);
    BOOST_TEST(s.subject() == "table");
}

BOOST_AUTO_TEST_CASE(counts_are_checked_against_what_remains) {
    std::vector<std::byte> data(24);
    ByteCursor in(data, "x");
    in.skip(8, "header");
    BOOST_TEST(in.fits(2, 8));
    BOOST_TEST(!in.fits(3, 8));
    BOOST_TEST(!in.fits(UINT64_MAX, 1));
    BOOST_TEST(in.fits(0, 8));
}

BOOST_AUTO_TEST_CASE(fail_throws_with_the_file) {
    const auto data = bytes_of({0});
    const ByteCursor in(data, "a.bin");
    const ck::Error e = error_of([&] { in.fail("bad magic", 0, "magic"); });
    BOOST_TEST(e.what() != nullptr);
    BOOST_TEST(e.message() == "bad magic");
    BOOST_TEST(e.file() == "a.bin");
    BOOST_TEST(e.offset().value_or(99) == 0u);
    BOOST_TEST(e.subject() == "magic");
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_byte_cursor
