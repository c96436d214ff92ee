// Atomic output: every file a writer produces is written to a temporary file beside its final
// path and renamed into place only when the whole conversion succeeded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "ck/export.hpp"

namespace ck {

class CK_SDK_API OutputFile {
  public:
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    ~OutputFile();

    // Appends (buffered). Checks for Ctrl-C, so a long write stops promptly.
    void write(std::span<const std::byte> bytes);
    void write(const void* data, std::size_t size) {
        write(std::span(static_cast<const std::byte*>(data), size));
    }
    void write_zeros(std::uint64_t count);
    // Overwrites bytes already written (headers patched at the end).
    void write_at(std::uint64_t offset, std::span<const std::byte> bytes);
    std::uint64_t size() const noexcept { return size_; }
    // Hands buffered bytes to the file, so that a writer can read back what it wrote.
    void flush();
    // The writer will write nothing more to this file: its buffered bytes go to the file, its
    // buffer's memory is given back and it is closed now rather than at commit (it is still
    // renamed into place, or removed, with the others). A writer of many files (a split set)
    // calls it as each one is complete, so that its memory does not grow with their number.
    // Writing afterwards is an error.
    void finish();

    // The path as the writer named it (shown in messages and reports).
    const std::filesystem::path& final_path() const noexcept { return final_; }
    const std::filesystem::path& temp_path() const noexcept { return temp_; }

  private:
    friend class OutputSet;
    OutputFile(std::filesystem::path final_path, std::filesystem::path target,
               std::filesystem::path temp_path, int fd);
    void close();
    void throw_if_finished() const;

    std::filesystem::path final_;
    std::filesystem::path target_;  // final_ with symbolic links followed: what is replaced
    std::filesystem::path temp_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    std::vector<std::byte> buffer_;
};

// What a writer gets: a place to create output files, nothing more. The host keeps the
// OutputSet behind it and alone decides to commit or abort.
class CK_SDK_API OutputSink {
  public:
    // Opens a temporary file beside final_path (see OutputSet::create).
    virtual OutputFile& create(const std::filesystem::path& final_path) = 0;

  protected:
    ~OutputSink() = default;
};

class CK_SDK_API OutputSet final : public OutputSink {
  public:
    explicit OutputSet(bool overwrite) : overwrite_(overwrite) {}
    OutputSet(const OutputSet&) = delete;
    OutputSet& operator=(const OutputSet&) = delete;
    ~OutputSet();  // aborts unless committed

    // Opens a temporary file beside final_path (creating missing directories, which abort()
    // removes again). A symbolic link is written through: the file it finally names is
    // replaced and the link stays. Refuses an existing file unless overwriting is allowed,
    // and anything that is not a regular file (a directory, a device, a FIFO, a socket)
    // always: renaming over it would destroy it.
    OutputFile& create(const std::filesystem::path& final_path) override;
    // Checks, without creating anything, that create(final_path) would be allowed.
    void check_target(const std::filesystem::path& final_path) const;

    void commit();          // flush, close and rename every file into place
    void abort() noexcept;  // remove every temporary file and created directory

    std::vector<std::filesystem::path> final_paths() const;

  private:
    bool overwrite_;
    bool committed_ = false;
    std::vector<std::unique_ptr<OutputFile>> files_;
    std::vector<std::filesystem::path> created_dirs_;
};

}  // namespace ck
