#include "ck/model.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "ck/ggml_types.hpp"

namespace ck {

std::uint64_t TensorInfo::elements() const {
    return element_count(ne).value_or(0);
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

void TensorView::release(std::size_t begin, std::size_t end) const {
    if (!file_backed || begin >= end || end > bytes.size()) return;
    // Only whole pages inside the range: a page shared with bytes still to come stays.
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto first =
        (reinterpret_cast<std::uintptr_t>(bytes.data() + begin) + page - 1) / page * page;
    const auto last = reinterpret_cast<std::uintptr_t>(bytes.data() + end) / page * page;
    if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace ck
