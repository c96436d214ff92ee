#include "ck/support/destination.hpp"

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
    fs::path name = input.filename();
    name.replace_extension(extension);
    return destination / name;
}

}  // namespace ck::support
