// One read-only memory map of an input file, for every reader (built-in or third-party).
//
// Why one class: a view into it is always marked file-backed (so TensorView::release and the
// last copy going away drop its pages from this process), and every mapping is known to the
// process-wide guard below, which turns an input that shrinks while it is being read into a
// clean error instead of a SIGBUS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/export.hpp"
#include "ck/model.hpp"

namespace ck {

class CK_SDK_API MappedFile : public std::enable_shared_from_this<MappedFile> {
  public:
    // Maps `path` read-only (an empty file maps to no bytes). Throws ck::Error naming the file
    // and the reason.
    static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);

    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    const std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    const std::string& path() const noexcept { return path_; }
    // The open descriptor of the mapped file (for copy_file_range: OutputFile::copy_from).
    int descriptor() const noexcept;

    // Bytes [offset, offset + size) as a file-backed view that keeps this mapping alive. When
    // the view's last copy goes, its pages leave this process's resident set (they stay in
    // the page cache). Throws when the range is not inside the file.
    TensorView view(std::uint64_t offset, std::uint64_t size) const;
    // Drops the pages holding `bytes` (a range of this mapping) from this process now: for a
    // reader that decoded them into a buffer of its own and will not read them again.
    void release(std::span<const std::byte> bytes) const noexcept;

  private:
    struct Region;  // the Boost.Interprocess mapping, kept out of the public header
    MappedFile();
    std::unique_ptr<Region> region_;
    std::string path_;
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
    int guard_slot_ = -1;
};

// The input guard. A file that shrinks while it is mapped makes the next read of a vanished
// page raise SIGBUS. The SDK's handler (installed with the first mapping) maps a zero page
// over the faulting page so the read completes, and records which input changed; the next
// check below (every OutputFile::write, every throw_if_interrupted(), every commit) then
// throws a ck::Error naming that input, so nothing built from the zeros is ever committed.
// Faults outside any MappedFile keep their default behaviour (a crash, as before).
CK_SDK_API void throw_if_input_changed();
// The path of the mapped input whose bytes contain `address`, if any (used to name the input
// when the kernel refuses to read a vanished page on our behalf: write() fails with EFAULT).
CK_SDK_API std::optional<std::string> mapped_input_at(const void* address);
// The paths of the inputs mapped now (each once per live mapping): the files a conversion reads
// its tensors from, which the host keeps outputs from replacing.
CK_SDK_API std::vector<std::string> mapped_input_paths();
// The error thrown for an input that changed while being read.
CK_SDK_API Error input_changed_error(const std::string& path);

}  // namespace ck
