#include "ck/support/destination.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace fs = std::filesystem;

namespace ck::support {
namespace {

// "-00001-of-00003": what llama-gguf-split appends to a shard's name before ".gguf".
constexpr std::size_t shard_suffix_size = 15;

bool has_shard_suffix(std::string_view stem) {
    if (stem.size() <= shard_suffix_size) return false;
    const std::string_view tail = stem.substr(stem.size() - shard_suffix_size);
    const auto digits = [](std::string_view s) {
        return std::all_of(s.begin(), s.end(),
                           [](unsigned char c) { return std::isdigit(c) != 0; });
    };
    return tail[0] == '-' && digits(tail.substr(1, 5)) && tail.substr(6, 4) == "-of-" &&
           digits(tail.substr(10, 5));
}

}  // namespace

bool is_directory_destination(const fs::path& destination) {
    const std::string& d = destination.native();
    std::error_code ec;
    return (!d.empty() && d.back() == '/') || fs::is_directory(destination, ec);
}

bool is_new_directory_destination(const fs::path& destination, std::string_view extension) {
    const std::string& d = destination.native();
    std::error_code ec;
    // symlink_status: a dangling link is something there (its target is written through).
    return !d.empty() && d != "-" && d.back() != '/' &&
           !fs::exists(fs::symlink_status(destination, ec)) && destination.extension() != extension;
}

fs::path single_file_destination(const fs::path& destination, const fs::path& input,
                                 std::string_view extension) {
    if (!is_directory_destination(destination)) return destination;
    // A shard of a llama-gguf-split set stands for the whole set (the GGUF reader reads all of
    // it), so the output is named after the set: model-00001-of-00003.gguf gives model.gguf.
    std::string stem = input.stem().string();
    if (has_shard_suffix(stem)) stem.resize(stem.size() - shard_suffix_size);
    return destination / (stem + std::string(extension));
}

}  // namespace ck::support
