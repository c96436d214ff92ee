#include "ck/support/mapped_tensors.hpp"

#include <string>

#include "ck/error.hpp"

namespace ck::support {

const MappedFile& MappedTensors::open(const std::filesystem::path& path) {
    extents_.clear();
    mapping_.reset();
    mapping_ = MappedFile::open(path);
    return *mapping_;
}

const MappedFile& MappedTensors::file() const {
    if (!mapping_) throw Error("no input is open");
    return *mapping_;
}

void MappedTensors::add(std::uint64_t offset, std::uint64_t bytes) {
    extents_.push_back({offset, bytes});
}

TensorView MappedTensors::view(std::size_t index) const {
    if (!mapping_ || index >= extents_.size())
        throw Error("tensor index " + std::to_string(index) + " out of range (" +
                        std::to_string(extents_.size()) + " tensors)",
                    mapping_ ? mapping_->path() : std::string());
    return mapping_->view(extents_[index].offset, extents_[index].bytes);
}

}  // namespace ck::support
