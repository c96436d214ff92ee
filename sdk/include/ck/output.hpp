// Atomic output: every file a writer produces is written to a temporary file beside its final
// path and renamed into place only when the whole conversion succeeded.
//
// Durability (the default): each file is fsync'ed before it is renamed, and each directory that
// received a file (or a new directory) is fsync'ed after the renames, so that after a power
// loss the target holds either the old file or the complete new one. set_sync(false) skips
// both (`--no-sync`, for scratch work).
//
// Temporary names are `.NAME.ckhost-PID-HOST-XXXXXX` beside NAME's target: the writing
// process's id and this machine's host name, so that a later run can tell a file left by a
// ckhost that was killed (SIGKILL, a crash, a power loss) from one that another ckhost is still
// writing, and remove only the former (remove_stale_temporaries).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ck/export.hpp"
#include "ck/model.hpp"

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
    // Appends `size` bytes of a mapped input from `from` by having the kernel copy them
    // (copy_file_range: no page of the input is mapped into the process, and nothing passes
    // through user memory). Returns false, having written nothing, where the kernel cannot
    // (standard output, file systems without it): the caller then writes the bytes.
    bool copy_from(const FileExtent& from, std::uint64_t size);
    // Overwrites bytes already written (headers patched at the end). Refused for a file that
    // goes to standard output (OutputSet::stream_to): a stream cannot be patched.
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
    // Empty for a file that goes to standard output.
    const std::filesystem::path& temp_path() const noexcept { return temp_; }

  private:
    friend class OutputSet;
    OutputFile(std::filesystem::path final_path, std::filesystem::path target,
               std::filesystem::path temp_path, int fd);
    void close();
    void write_out(const std::byte* p, std::size_t n);  // to the descriptor, unbuffered
    void start_writeback(off_t start, std::size_t n);
    void throw_if_finished() const;
    bool streamed() const noexcept { return temp_.empty(); }
    // What messages call the file: its final path, or "standard output".
    std::string shown_name() const;

    std::filesystem::path final_;
    std::filesystem::path target_;  // final_ with symbolic links followed: what is replaced
    std::filesystem::path temp_;    // empty when the file goes to standard output
    int fd_ = -1;
    // fsync before close. It sits in the padding after fd_, so the layout plugins compiled
    // against earlier headers see (tests/unit/test_abi_layout.cpp) is unchanged.
    bool sync_ = true;
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

    // Flush, fsync and close every file; check each target again (still absent, or a regular
    // file when overwriting) and rename every file into place; then fsync the directories.
    void commit();
    void abort() noexcept;  // remove every temporary file and created directory

    std::vector<std::filesystem::path> final_paths() const;

    // fsync each file before its rename and the directories after (true, the default); false
    // skips both (`--no-sync`). Set before create().
    void set_sync(bool sync) noexcept { sync_ = sync; }
    // The one file the writer creates goes to `fd` (standard output, `-o -`) as it is written:
    // no temporary file, no rename, nothing to remove when the conversion fails (what was sent
    // cannot be taken back: the exit status tells). write_at and a second file are refused.
    // Set before create(); the descriptor stays open and is not this set's to close.
    void stream_to(int fd) noexcept { stream_fd_ = fd; }
    // True when some bytes have already gone to the stream.
    bool stream_started() const noexcept;

  private:
    bool overwrite_;
    bool committed_ = false;
    // Both fit in the padding before files_: the class keeps its size (test_abi_layout.cpp).
    bool sync_ = true;
    int stream_fd_ = -1;
    std::vector<std::unique_ptr<OutputFile>> files_;
    std::vector<std::filesystem::path> created_dirs_;
};

// The directories from `dir` up that do not exist, deepest first: what creating a file in `dir`
// has to create (OutputSet::create does, and `ckhost batch` notes them for its jobs).
CK_SDK_API std::vector<std::filesystem::path> missing_directories(const std::filesystem::path& dir);
// Removes each of `dirs` that is empty, deeper ones before the folders holding them (so that a
// folder emptied by removing its last subfolder goes too); anything not empty stays. Never
// throws.
CK_SDK_API void remove_empty_directories(std::vector<std::filesystem::path> dirs) noexcept;

// A temporary file of a ckhost process that has ended, removed by remove_stale_temporaries.
struct StaleTemporary {
    std::filesystem::path path;
    long pid = 0;  // the process that wrote it
};

// Removes the temporary files that ckhost processes which have ended left beside the targets
// of `final_paths` (symbolic links followed, as create() does), and returns them. Only regular
// files named exactly as create() names a temporary file for one of those targets, on this
// machine (the host name in the name), are considered; one is stale when no process has its
// pid, or when the process that has it now started after the file was last written (the pid
// was reused: the writer was alive when it last wrote). Everything else, including temporary
// files of other machines sharing the directory, is left alone. Never throws.
CK_SDK_API std::vector<StaleTemporary> remove_stale_temporaries(
    const std::vector<std::filesystem::path>& final_paths);

}  // namespace ck
