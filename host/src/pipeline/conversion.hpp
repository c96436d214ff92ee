// One conversion as the user asks for it, on the command line or as a line of a batch file.
#pragma once

#include <filesystem>
#include <string>

namespace ckhost {

struct Conversion {
    std::string pipeline;  // "gguf:headpack:bump"
    std::filesystem::path input;
    std::filesystem::path output;
};

}  // namespace ckhost
