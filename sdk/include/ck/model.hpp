// The model header every stage sees: metadata and the tensor directory, no tensor bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ck/export.hpp"
#include "ck/metadata.hpp"

namespace ck {

struct CK_SDK_API TensorInfo {
    std::string name;
    std::uint32_t type = 0;           // ggml type id
    std::vector<std::int64_t> ne;     // ne[0] innermost; its size is the number of dims as stored
    std::uint64_t nbytes = 0;         // bytes of the tensor's data
    std::uint64_t source_offset = 0;  // where the reader found it (format-specific, for display)
    // How the file stores the tensor when the reader hands it out as another type (GGUF-lite's
    // Q4_per_group_64, dequantized to F32 when read): the format's own name for the stored type
    // and the bytes the file holds for it, for `inspect`. Empty and 0 when the reader hands out
    // the bytes as stored. Only a reader's header means anything by them: stages ignore them.
    // (The empty initializer lets code that lists only the fields before these keep compiling
    // under -Wmissing-field-initializers.)
    std::string stored_type{};
    std::uint64_t stored_bytes = 0;

    std::uint64_t elements() const;  // product of ne (checked when the tensor was made)
    // Runs of ne[0] elements (RowRange, ck/stage.hpp): elements() / ne[0]; 1 for a scalar.
    std::uint64_t rows() const;
    // Bytes of one row: nbytes / rows() (a row holds whole quantization blocks).
    std::uint64_t row_bytes() const { return rows() ? nbytes / rows() : 0; }
    std::string shape_string() const;  // "[256, 1024]"
};

struct CK_SDK_API ModelHeader {
    std::string source;  // file the reader opened
    std::string format;  // "gguf", "bump", ... (reader's plugin name)
    Metadata metadata;
    std::vector<TensorInfo> tensors;
    // Facts about the container itself, for `inspect` (GGUF version, data start, checksum...).
    std::vector<std::pair<std::string, std::string>> format_facts;

    const TensorInfo* find_tensor(std::string_view name) const;
    std::uint64_t total_bytes() const;
};

class MappedFile;
struct TensorAllocation;

// Where a file-backed view's bytes lie: in `file`, from byte `offset`.
struct FileExtent {
    const MappedFile* file;
    std::uint64_t offset;
};

// Bytes of one tensor, and what keeps them alive. Made only through the factories below, so a
// view's kind (file-backed or not) is always right: only a MappedFile makes file-backed views,
// whose pages a consumer may drop (release()) once it has finished with them.
class CK_SDK_API TensorView {
  public:
    TensorView() = default;

    // A view that owns its bytes.
    static TensorView owning(std::vector<std::byte> data);
    // A view of memory that `owner` keeps alive (a buffer a stage filled, a slice of a larger
    // one). Never file-backed: release() leaves it alone.
    static TensorView held(std::span<const std::byte> bytes, std::shared_ptr<const void> owner);
    // A new zero-filled, 64-byte aligned buffer of `size` bytes, owned by the returned view,
    // for a stage to fill through `TensorAllocation::bytes`. Buffers of 1 MiB and more come
    // straight from the system (mmap) and go back to it when the view's last copy goes:
    // freed heap memory would stay in the process and add up across tensors.
    static TensorAllocation allocate(std::size_t size);

    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    const std::byte* data() const noexcept { return bytes_.data(); }
    std::size_t size() const noexcept { return bytes_.size(); }
    // True when the bytes lie in a read-only file mapping (a reader's zero-copy view).
    bool file_backed() const noexcept { return file_backed_; }
    // Where a file-backed view's bytes are in their file (nullopt for other views), so that a
    // writer can have the kernel copy them (OutputFile::copy_from) without reading them
    // through the mapping: page faults cost more than the copy itself.
    std::optional<FileExtent> file_extent() const noexcept;
    // Bytes [offset, offset + size) of this view, sharing its owner and its kind.
    TensorView slice(std::size_t offset, std::size_t size) const;

    // Tells the kernel that bytes [begin, end) of this view will not be read again by this
    // process, so their pages leave its resident set (they stay in the page cache). A no-op for
    // views that are not file-backed. Writers that stream a large tensor in chunks call it
    // after each chunk, which keeps peak memory at a few chunks instead of the largest tensor.
    void release(std::size_t begin, std::size_t end) const;
    // Maps bytes [begin, end) of a file-backed view into the process in one call before a
    // bulk copy of them (a write() straight from the mapping): faulting a range in page by
    // page costs the kernel as much as the copy itself, and doubled the time of a plain GGUF
    // copy. A no-op for views that are not file-backed.
    void prefault(std::size_t begin, std::size_t end) const;

  private:
    friend class MappedFile;
    // Only MappedFile::view makes these.
    static TensorView mapped(std::span<const std::byte> bytes, std::shared_ptr<const void> owner);

    std::span<const std::byte> bytes_;
    std::shared_ptr<const void> owner_;
    bool file_backed_ = false;
};

// What TensorView::allocate returns: the view, and its bytes for the stage to fill.
struct TensorAllocation {
    TensorView view;
    std::span<std::byte> bytes;
};

}  // namespace ck
