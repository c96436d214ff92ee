// Output buffers straight from mmap, given back to the system the moment the writer is done.
//
// With malloc, once a big buffer has been freed glibc raises its mmap threshold (up to 32 MB)
// and serves the next tensors from the heap, which keeps what they freed: a whole-model repack
// then holds ~15 MB of dead buffers next to the biggest tensor, above the peak-RSS target.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <new>
#include <span>

#include "ck/error.hpp"
#include "ck/model.hpp"

namespace ck::repack {

class PageBuffer {
  public:
    explicit PageBuffer(std::size_t size) : size_(size) {
        if (size_ == 0) return;
        void* p =
            ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw Error("out of memory: cannot map " + std::to_string(size_) + " bytes");
        data_ = static_cast<std::byte*>(p);  // zero-filled by the system
    }
    ~PageBuffer() {
        if (data_) ::munmap(data_, size_);
    }
    PageBuffer(const PageBuffer&) = delete;
    PageBuffer& operator=(const PageBuffer&) = delete;

    std::byte* data() const { return data_; }
    std::size_t size() const { return size_; }

    // A view that owns the buffer.
    static TensorView view(std::shared_ptr<PageBuffer> buffer) {
        const std::span<const std::byte> bytes(buffer->data(), buffer->size());
        return {bytes, std::move(buffer)};
    }

  private:
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace ck::repack
