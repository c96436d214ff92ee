#include "ck/support/destination.hpp"

#include <regex>

namespace fs = std::filesystem;

namespace ck::support {

bool is_directory_destination(const fs::path& destination) {
    const std::string& d = destination.native();
    std::error_code ec;
    return (!d.empty() && d.back() == '/') || fs::is_directory(destination, ec);
}

fs::path single_file_destination(const fs::path& destination, const fs::path& input,
                                 std::string_view extension) {
    if (!is_directory_destination(destination)) return destination;
    // A shard of a llama-gguf-split set stands for the whole set (the GGUF reader reads all of
    // it), so the output is named after the set: model-00001-of-00003.gguf gives model.gguf.
    static const std::regex shard_suffix("-[0-9]{5}-of-[0-9]{5}$");
    const std::string stem = std::regex_replace(input.stem().string(), shard_suffix, "");
    return destination / (stem + std::string(extension));
}

}  // namespace ck::support
