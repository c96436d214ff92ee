// The model header every stage sees: metadata and the tensor directory, no tensor bytes.
#pragma once

#include <cstdint>
#include <memory>
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

    std::uint64_t elements() const;    // product of ne (checked when the tensor was made)
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

// Bytes of one tensor. Usually a view into the reader's mapping; `owner` keeps what the span
// points into alive (and may release pages from memory when the last copy goes away).
struct CK_SDK_API TensorView {
    std::span<const std::byte> bytes;
    std::shared_ptr<const void> owner;
    // True when `bytes` lies in a read-only file mapping (a reader's zero-copy view). Only
    // then may a consumer drop pages it has finished with; see release().
    bool file_backed = false;

    // Tells the kernel that bytes [begin, end) of this view will not be read again by this
    // process, so their pages leave its resident set (they stay in the page cache). A no-op for
    // views that are not file-backed. Writers that stream a large tensor in chunks call it
    // after each chunk, which keeps peak memory at a few chunks instead of the largest tensor.
    void release(std::size_t begin, std::size_t end) const;

    // A view that owns its bytes.
    static TensorView owning(std::vector<std::byte> data) {
        auto buffer = std::make_shared<std::vector<std::byte>>(std::move(data));
        std::span<const std::byte> span(*buffer);
        return {span, std::move(buffer)};
    }
};

}  // namespace ck
