// ByteCursor: reads fixed-size fields of a file's bytes in order, in little- or big-endian order,
// bounded by the buffer. Every read checks that its bytes remain, and a count read from the file
// can be checked against what remains (fits()) before anything is sized by it. Failures throw
// ck::Error with the file, the byte offset and a subject.
#pragma once

#include <boost/endian/conversion.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace ck::support {

using ByteOrder = boost::endian::order;

class ByteCursor {
  public:
    ByteCursor(const std::byte* data, std::uint64_t size, std::string file,
               ByteOrder order = ByteOrder::little)
        : data_(data), size_(size), file_(std::move(file)), order_(order) {}
    ByteCursor(std::span<const std::byte> bytes, std::string file,
               ByteOrder order = ByteOrder::little)
        : ByteCursor(bytes.data(), bytes.size(), std::move(file), order) {}

    std::uint64_t pos() const noexcept { return pos_; }
    std::uint64_t size() const noexcept { return size_; }
    std::uint64_t remaining() const noexcept { return size_ - pos_; }
    const std::byte* here() const noexcept { return data_ + pos_; }
    const std::string& file() const noexcept { return file_; }

    // The order of the fields read from now on (a reader may learn it from a version field).
    ByteOrder byte_order() const noexcept { return order_; }
    void set_byte_order(ByteOrder order) noexcept { order_ = order; }

    // True when `count` items of at least `min_bytes_each` bytes (> 0) could fit in what
    // remains; the caller words the error, which differs by format and field.
    bool fits(std::uint64_t count, std::uint64_t min_bytes_each) const noexcept {
        return count <= remaining() / min_bytes_each;
    }

    [[noreturn]] void fail(const std::string& message, std::uint64_t at,
                           const std::string& subject = {}) const;

    // Throws "file ends inside WHAT (needs N bytes, R remain)" at the current position unless
    // `n` bytes remain. `what` and `subject` become strings only on failure: hot loops (150k
    // tokenizer strings) must not allocate.
    void need(std::uint64_t n, std::string_view what, std::string_view subject = {}) const {
        if (n > remaining()) fail_need(n, what, subject);
    }

    // One integer or floating-point field in the cursor's byte order.
    template <class T>
    T read(std::string_view what, std::string_view subject = {}) {
        T v = peek<T>(what, subject);
        pos_ += sizeof(T);
        return v;
    }

    // The next field without moving past it.
    template <class T>
    T peek(std::string_view what, std::string_view subject = {}) const {
        static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
        need(sizeof(T), what, subject);
        const auto* p = reinterpret_cast<const unsigned char*>(here());
        return order_ == ByteOrder::little
                   ? boost::endian::endian_load<T, sizeof(T), ByteOrder::little>(p)
                   : boost::endian::endian_load<T, sizeof(T), ByteOrder::big>(p);
    }

    // `n` raw bytes (names, strings, arrays kept in the file's encoding), then past them.
    std::span<const std::byte> bytes(std::uint64_t n, std::string_view what,
                                     std::string_view subject = {}) {
        need(n, what, subject);
        std::span<const std::byte> out(here(), static_cast<std::size_t>(n));
        pos_ += n;
        return out;
    }
    std::string_view chars(std::uint64_t n, std::string_view what, std::string_view subject = {}) {
        const auto b = bytes(n, what, subject);
        return {reinterpret_cast<const char*>(b.data()), b.size()};
    }

    void skip(std::uint64_t n, std::string_view what, std::string_view subject = {}) {
        need(n, what, subject);
        pos_ += n;
    }

    // Moves to an absolute offset, at most the end of the buffer.
    void seek(std::uint64_t offset, std::string_view what, std::string_view subject = {});

  private:
    [[noreturn, gnu::cold]] void fail_need(std::uint64_t n, std::string_view what,
                                           std::string_view subject) const;

    const std::byte* data_;
    std::uint64_t size_;
    std::uint64_t pos_ = 0;
    std::string file_;
    ByteOrder order_;
};

}  // namespace ck::support
