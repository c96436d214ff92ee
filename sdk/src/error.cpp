#include "ck/error.hpp"

namespace ck {
namespace {

// One line: "file: byte N: subject: message". Parts that are unknown are left out.
std::string format(const std::string& message, const std::string& file,
                   std::optional<std::uint64_t> offset, const std::string& subject) {
    std::string line;
    if (!file.empty()) line += file + ": ";
    if (offset) line += "byte " + std::to_string(*offset) + ": ";
    if (!subject.empty()) line += subject + ": ";
    return line + message;
}

}  // namespace

Error::Error(std::string message, std::string file, std::optional<std::uint64_t> offset,
             std::string subject, ErrorKind kind)
    : std::runtime_error(format(message, file, offset, subject)),
      message_(std::move(message)),
      file_(std::move(file)),
      offset_(offset),
      subject_(std::move(subject)),
      kind_(kind) {}

// Defined out of line so the vtable and typeinfo live in the SDK library only.
Error::~Error() = default;

Error Error::with_file(const std::string& file) const {
    return Error(message_, file, offset_, subject_, kind_);
}

Error usage_error(std::string message) {
    return Error(std::move(message), {}, {}, {}, ErrorKind::usage);
}

}  // namespace ck
