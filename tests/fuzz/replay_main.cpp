// The fuzz targets without libFuzzer: runs every file given (or every file in a directory
// given, recursively, in name order) through LLVMFuzzerTestOneInput once. The normal build
// links each target with this main so that CTest replays the regression corpus: an input that
// once crashed a target fails the test suite if the fix is ever lost.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Defined by the targets that set something up once (loading plugins, a split set).
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg = argv[i];
        if (fs::is_directory(arg)) {
            for (const auto& entry : fs::recursive_directory_iterator(arg))
                if (entry.is_regular_file() && entry.path().filename() != "README.md")
                    files.push_back(entry.path());
        } else if (fs::exists(arg)) {
            files.push_back(arg);
        } else {
            // A target's regression folder exists only once something was found.
            std::cout << "nothing at " << arg.string() << std::endl;
        }
    }
    if (files.empty()) {
        std::cerr << "no inputs to replay\n";  // every target has seeds: a wrong path
        return 2;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                      std::istreambuf_iterator<char>()};
        std::cout << "replaying " << file.string() << " (" << bytes.size() << " bytes)"
                  << std::endl;
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
    std::cout << files.size() << " inputs replayed" << std::endl;
    return 0;
}
