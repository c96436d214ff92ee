#include "ck/support/byte_cursor.hpp"

#include "ck/error.hpp"

namespace ck::support {

void ByteCursor::fail(const std::string& message, std::uint64_t at,
                      const std::string& subject) const {
    throw Error(message, file_, at, subject);
}

void ByteCursor::fail_need(std::uint64_t n, std::string_view what, std::string_view subject) const {
    fail("file ends inside " + std::string(what) + " (needs " + std::to_string(n) + " bytes, " +
             std::to_string(remaining()) + " remain)",
         pos_, std::string(subject));
}

void ByteCursor::seek(std::uint64_t offset, std::string_view what, std::string_view subject) {
    if (offset > size_)
        fail("file ends before " + std::string(what) + " (at byte " + std::to_string(offset) +
                 ", the file has " + std::to_string(size_) + " bytes)",
             size_, std::string(subject));
    pos_ = offset;
}

}  // namespace ck::support
