#include "ck/model.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>

#include "ck/ggml_types.hpp"

namespace ck {

std::uint64_t TensorInfo::elements() const {
    return element_count(ne).value_or(0);
}

std::uint64_t TensorInfo::rows() const {
    if (ne.empty()) return 1;
    return ne[0] > 0 ? elements() / static_cast<std::uint64_t>(ne[0]) : 0;
}

std::string TensorInfo::shape_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

const TensorInfo* ModelHeader::find_tensor(std::string_view name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::uint64_t ModelHeader::total_bytes() const {
    std::uint64_t sum = 0;
    for (const auto& t : tensors) sum += t.nbytes;
    return sum;
}

TensorView TensorView::owning(std::vector<std::byte> data) {
    auto buffer = std::make_shared<std::vector<std::byte>>(std::move(data));
    const std::span<const std::byte> span(*buffer);
    return held(span, std::move(buffer));
}

TensorView TensorView::held(std::span<const std::byte> bytes, std::shared_ptr<const void> owner) {
    TensorView v;
    v.bytes_ = bytes;
    v.owner_ = std::move(owner);
    return v;
}

TensorView TensorView::mapped(std::span<const std::byte> bytes, std::shared_ptr<const void> owner) {
    TensorView v = held(bytes, std::move(owner));
    v.file_backed_ = true;
    return v;
}

namespace {

// Large buffers whose views are gone, kept for the next allocation of the same size. Tensors
// travel in row blocks of equal sizes, and on a virtual machine the first store to each fresh
// page costs more than copying it (about 9 us a 4 KiB page here): a block's buffer reused
// rather than mapped anew makes a permuted or converted block that much cheaper. Bounded, so
// that the kept pages stay a few blocks' worth of resident memory.
class ParkedBuffers {
  public:
    static constexpr std::size_t most_bytes = 16u << 20;
    static constexpr std::size_t largest = 8u << 20;

    void* take(std::size_t size) {
        std::lock_guard lock(mutex_);
        for (auto it = parked_.begin(); it != parked_.end(); ++it)
            if (it->second == size) {
                void* p = it->first;
                parked_.erase(it);
                bytes_ -= size;
                return p;
            }
        return nullptr;
    }
    void give_back(void* p, std::size_t size) {
        {
            std::lock_guard lock(mutex_);
            if (size <= largest && bytes_ + size <= most_bytes) {
                parked_.emplace_back(p, size);
                bytes_ += size;
                return;
            }
        }
        ::munmap(p, size);
    }

  private:
    std::mutex mutex_;
    std::vector<std::pair<void*, std::size_t>> parked_;
    std::size_t bytes_ = 0;
};

ParkedBuffers& parked_buffers() {
    static ParkedBuffers* parked = new ParkedBuffers;  // never destroyed: views may outlive main
    return *parked;
}

}  // namespace

TensorAllocation TensorView::allocate(std::size_t size) {
    constexpr std::size_t system_threshold = 1u << 20;
    constexpr std::size_t alignment = 64;
    std::byte* data = nullptr;
    std::shared_ptr<const void> owner;
    if (size >= system_threshold) {
        void* p = parked_buffers().take(size);
        if (p) {
            std::memset(p, 0, size);  // a reused buffer is zero-filled like a fresh one
        } else {
            p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();  // zero-filled by the system
        }
        data = static_cast<std::byte*>(p);  // page-aligned
        owner = std::shared_ptr<const void>(
            p, [size](const void* q) { parked_buffers().give_back(const_cast<void*>(q), size); });
    } else {
        data =
            static_cast<std::byte*>(::operator new(size ? size : 1, std::align_val_t(alignment)));
        std::memset(data, 0, size);
        owner = std::shared_ptr<const void>(data, [](const void* q) {
            ::operator delete(const_cast<void*>(q), std::align_val_t(alignment));
        });
    }
    TensorAllocation a;
    a.view = held(std::span<const std::byte>(data, size), std::move(owner));
    a.bytes = std::span<std::byte>(data, size);
    return a;
}

TensorView TensorView::slice(std::size_t offset, std::size_t size) const {
    if (offset > bytes_.size() || size > bytes_.size() - offset)
        throw std::out_of_range("TensorView::slice outside the view");
    TensorView v = *this;
    v.bytes_ = bytes_.subspan(offset, size);
    return v;
}

void TensorView::release(std::size_t begin, std::size_t end) const {
    if (!file_backed_ || begin >= end || end > bytes_.size()) return;
    // Only whole pages inside the range: a page shared with bytes still to come stays.
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto first =
        (reinterpret_cast<std::uintptr_t>(bytes_.data() + begin) + page - 1) / page * page;
    const auto last = reinterpret_cast<std::uintptr_t>(bytes_.data() + end) / page * page;
    if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void TensorView::prefault(std::size_t begin, std::size_t end) const {
    if (!file_backed_ || begin >= end || end > bytes_.size()) return;
    // Every page touching the range. A kernel without MADV_POPULATE_READ (before Linux 5.14)
    // refuses it, and the pages fault in one by one as before.
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto first = reinterpret_cast<std::uintptr_t>(bytes_.data() + begin) / page * page;
    const auto last = reinterpret_cast<std::uintptr_t>(bytes_.data() + end);
#ifdef MADV_POPULATE_READ
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_READ);
#else
    (void)first;
    (void)last;
#endif
}

}  // namespace ck
