#include "ck/model.hpp"

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

}  // namespace ck
