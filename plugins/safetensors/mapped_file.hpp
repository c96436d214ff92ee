// A read-only memory map of the input, and tensor views into it that give their pages back
// when released, so a streaming conversion keeps only the tensors in flight resident.
#pragma once

#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ck/error.hpp"
#include "ck/model.hpp"

namespace ck::safetensors {

struct MappedFile {
    boost::interprocess::file_mapping file;
    boost::interprocess::mapped_region region;
    const std::byte* data() const { return static_cast<const std::byte*>(region.get_address()); }
    std::size_t size() const { return region.get_size(); }
};

inline std::shared_ptr<const MappedFile> map_file(const std::string& path) {
    namespace bip = boost::interprocess;
    auto mapped = std::make_shared<MappedFile>();
    try {
        mapped->file = bip::file_mapping(path.c_str(), bip::read_only);
        mapped->region = bip::mapped_region(mapped->file, bip::read_only);
    } catch (const bip::interprocess_exception& e) {
        throw Error(std::string("cannot map the file: ") + e.what(), path);
    }
    return mapped;
}

// Owner of one tensor view. Dropping a clean, read-only file page is always safe: a later
// access faults it in again from the page cache.
struct TensorPages {
    std::shared_ptr<const MappedFile> file;
    const std::byte* data;
    std::size_t size;
    ~TensorPages() {
        if (size == 0) return;
        const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
        const auto begin = reinterpret_cast<std::uintptr_t>(data) / page * page;
        const auto end = reinterpret_cast<std::uintptr_t>(data + size);
        ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
    }
};

inline TensorView view_of(const std::shared_ptr<const MappedFile>& file, std::uint64_t offset,
                          std::uint64_t size) {
    const std::byte* data = file->data() + offset;
    auto owner = std::make_shared<TensorPages>(TensorPages{file, data, size});
    return {std::span(data, size), std::move(owner)};
}

}  // namespace ck::safetensors
