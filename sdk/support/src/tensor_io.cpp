#include "ck/support/tensor_io.hpp"

#include <algorithm>

namespace ck::support {

void check_tensor_bytes(const TensorView& view, std::uint64_t expected, std::string_view name,
                        std::string_view type, std::string file) {
    if (view.bytes().size() == expected) return;
    throw tensor_error("got " + std::to_string(view.bytes().size()) + " bytes" +
                           (type.empty() ? "" : " of " + std::string(type)) + ", expected " +
                           std::to_string(expected),
                       name, std::move(file));
}

void write_streaming(OutputFile& file, const TensorView& view) {
    if (const auto extent = view.file_extent(); extent && file.copy_from(*extent, view.size()))
        return;
    constexpr std::size_t chunk = 4u << 20;
    const std::size_t size = view.bytes().size();
    for (std::size_t done = 0; done < size; done += chunk) {
        const std::size_t end = std::min(size, done + chunk);
        view.prefault(done, end);
        file.write(view.bytes().subspan(done, end - done));
        view.release(done, end);
    }
}

}  // namespace ck::support
