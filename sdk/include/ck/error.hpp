// ck::Error: the only exception type that may cross the plugin boundary.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "ck/export.hpp"

namespace ck {

// What the host does with an error: each kind maps to one exit code (cli.md).
enum class ErrorKind {
    input,      // exit 1: bad file, unsupported tensor, I/O error
    usage,      // exit 2: bad pipeline, option or argument
    plugin,     // exit 3: a plugin could not be loaded or is incompatible
    interrupt,  // the user pressed Ctrl-C
    // exit 1: an output could not be written (it exists, is not a regular file, a write,
    // fsync or rename failed). Last, so that the values before it keep their numbers.
    output,
};

class CK_SDK_API Error : public std::runtime_error {
  public:
    // `subject` is the key or tensor the problem is about, already quoted as the caller wants
    // it shown (e.g. "tensor 'blk.0.attn_q.weight'" or "key 'general.alignment'").
    Error(std::string message, std::string file = {}, std::optional<std::uint64_t> offset = {},
          std::string subject = {}, ErrorKind kind = ErrorKind::input);
    ~Error() override;

    const std::string& message() const noexcept { return message_; }
    const std::string& file() const noexcept { return file_; }
    std::optional<std::uint64_t> offset() const noexcept { return offset_; }
    const std::string& subject() const noexcept { return subject_; }
    ErrorKind kind() const noexcept { return kind_; }

    // Copies with the file filled in, for code that learns the file name late.
    Error with_file(const std::string& file) const;

  private:
    std::string message_;
    std::string file_;
    std::optional<std::uint64_t> offset_;
    std::string subject_;
    ErrorKind kind_;
};

// Shorthand for the usage errors stages raise while checking their options.
CK_SDK_API Error usage_error(std::string message);

// ---- errors by what they are about (header-only: not part of the plugin ABI) ----------------
// The one subject format: "tensor 'NAME'", "tensor N 'NAME'" where a file's directory index
// helps, "key 'NAME'".
inline std::string tensor_subject(std::string_view name) {
    return "tensor '" + std::string(name) + "'";
}
inline std::string tensor_subject(std::uint64_t index, std::string_view name) {
    return "tensor " + std::to_string(index) + " '" + std::string(name) + "'";
}
inline std::string key_subject(std::string_view key) {
    return "key '" + std::string(key) + "'";
}

// A problem with one tensor, in `file` when known (the host fills in the input otherwise), at a
// byte offset where the parser knows one.
inline Error tensor_error(std::string message, std::string_view tensor, std::string file = {},
                          std::optional<std::uint64_t> offset = {}) {
    return Error(std::move(message), std::move(file), offset, tensor_subject(tensor));
}
// A problem with one metadata key.
inline Error key_error(std::string message, std::string_view key, std::string file = {},
                       std::optional<std::uint64_t> offset = {}) {
    return Error(std::move(message), std::move(file), offset, key_subject(key));
}
// The user pressed Ctrl-C: the host removes partial outputs and exits 130.
inline Error interrupted_error() {
    return Error("interrupted", {}, {}, {}, ErrorKind::interrupt);
}
// A problem with a file as a whole, or at a byte offset in it.
inline Error file_error(std::string message, std::string file,
                        std::optional<std::uint64_t> offset = {}) {
    return Error(std::move(message), std::move(file), offset);
}
// An output that cannot be written or put in place (exit 1, "kind": "output" in --json).
inline Error output_error(std::string message, std::string file) {
    return Error(std::move(message), std::move(file), {}, {}, ErrorKind::output);
}
// A plugin that broke its contract (exit 3): `where` is the plugin's library or name.
inline Error plugin_bug(std::string message, std::string where = {}) {
    return Error(std::move(message), std::move(where), {}, {}, ErrorKind::plugin);
}

}  // namespace ck
