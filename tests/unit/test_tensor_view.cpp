// TensorView's factories and MappedFile: only a mapping makes file-backed views, buffers from
// allocate() are aligned and zero-filled, slices share their owner and kind.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>

#include "ck/error.hpp"
#include "ck/mapped_file.hpp"
#include "ck/model.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_tensor_view {

BOOST_AUTO_TEST_SUITE(tensor_view)

BOOST_AUTO_TEST_CASE(allocate_is_aligned_zeroed_and_owned) {
    for (std::size_t size : {std::size_t{1}, std::size_t{1000}, std::size_t{3} << 20}) {
        ck::TensorAllocation a = ck::TensorView::allocate(size);
        BOOST_TEST(a.view.size() == size);
        BOOST_TEST(a.bytes.data() == a.view.data());
        BOOST_TEST(reinterpret_cast<std::uintptr_t>(a.bytes.data()) % 64 == 0u);
        bool zero = true;
        for (std::byte b : a.bytes) zero = zero && b == std::byte{0};
        BOOST_TEST(zero);
        BOOST_TEST(!a.view.file_backed());
        a.bytes[size - 1] = std::byte{7};
        const ck::TensorView copy = a.view;  // shares the buffer
        a.view = {};
        BOOST_TEST(std::to_integer<int>(copy.bytes()[size - 1]) == 7);
    }
}

// A large buffer whose views are gone is kept for the next allocation of its size (row blocks
// are equal in size): it comes back zero-filled, as a fresh one does, however it was written.
BOOST_AUTO_TEST_CASE(a_reused_large_buffer_is_zero_filled_again) {
    constexpr std::size_t size = (std::size_t{2} << 20) + 3 * 4096;  // a size no other test uses
    const std::byte* first = nullptr;
    for (int round = 0; round < 3; ++round) {
        ck::TensorAllocation a = ck::TensorView::allocate(size);
        if (round == 0) first = a.bytes.data();
        std::size_t nonzero = 0;
        for (std::byte b : a.bytes) nonzero += b != std::byte{0};
        BOOST_TEST(nonzero == 0u, "round " << round);
        std::memset(a.bytes.data(), 0xab, size);  // dirty it before giving it back
    }
    // The same pages came back (the process keeps a few blocks' worth, not more).
    ck::TensorAllocation again = ck::TensorView::allocate(size);
    BOOST_TEST(again.bytes.data() == first);
}

BOOST_AUTO_TEST_CASE(owning_held_and_slices) {
    ck::TensorView v = ck::TensorView::owning({std::byte{1}, std::byte{2}, std::byte{3}});
    BOOST_TEST(v.size() == 3u);
    BOOST_TEST(!v.file_backed());
    ck::TensorView s = v.slice(1, 2);
    BOOST_TEST(s.size() == 2u);
    BOOST_TEST(std::to_integer<int>(s.bytes()[0]) == 2);
    BOOST_CHECK_THROW(v.slice(2, 2), std::out_of_range);
    v.release(0, 3);  // not file-backed: nothing happens, the bytes stay
    BOOST_TEST(std::to_integer<int>(v.bytes()[0]) == 1);
    const std::byte local[2] = {std::byte{9}, std::byte{8}};
    ck::TensorView h = ck::TensorView::held(local, nullptr);
    BOOST_TEST(!h.file_backed());
    BOOST_TEST(h.data() == local);
}

BOOST_AUTO_TEST_CASE(mapped_file_views_are_file_backed) {
    cktest::TempDir dir;
    std::vector<unsigned char> content(10000);
    for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<unsigned char>(i);
    cktest::write_file(dir / "f.bin", content);
    auto file = ck::MappedFile::open(dir / "f.bin");
    BOOST_TEST(file->size() == content.size());
    ck::TensorView v = file->view(100, 5000);
    BOOST_TEST(v.file_backed());
    BOOST_TEST(std::memcmp(v.data(), content.data() + 100, 5000) == 0);
    v.release(0, 5000);  // pages dropped; a later read faults them in again
    BOOST_TEST(std::memcmp(v.data(), content.data() + 100, 5000) == 0);
    BOOST_TEST(v.slice(10, 10).file_backed());
    BOOST_CHECK_THROW(file->view(9000, 2000), ck::Error);
    BOOST_CHECK_THROW(ck::MappedFile::open(dir / "missing"), ck::Error);
    cktest::write_file(dir / "empty", {});
    BOOST_TEST(ck::MappedFile::open(dir / "empty")->size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_tensor_view
