#include "registry/format_probe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "cli/suggest.hpp"
#include "pipeline/plugin_call.hpp"

namespace fs = std::filesystem;

namespace ckhost {
namespace {

bool is_pickle_name(const std::string& name) {
    const std::string extension = fs::path(name).extension().string();
    return (name.starts_with("pytorch_model") && extension == ".bin") || extension == ".pt" ||
           extension == ".pth" || extension == ".ckpt";
}

}  // namespace

fs::path probed_file(const fs::path& input) {
    std::error_code ec;
    if (fs::is_directory(input, ec) && fs::is_regular_file(input / "config.json", ec))
        return input / "config.json";
    return input;
}

ProbeSample probe_sample(const fs::path& input) {
    ProbeSample sample;
    std::error_code ec;
    const fs::path shown = probed_file(input);
    if (fs::is_directory(shown, ec)) return sample;
    const int fd = ::open(shown.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sample;
    while (sample.size < sizeof sample.head) {
        const ssize_t n = ::read(fd, sample.head + sample.size, sizeof sample.head - sample.size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        sample.size += static_cast<std::size_t>(n);
    }
    ::close(fd);
    sample.path = shown;
    return sample;
}

std::vector<std::string> readers_recognising(PluginRegistry& registry, const ProbeSample& sample) {
    std::vector<std::string> found;
    if (sample.path.empty()) return found;
    for (const std::string& name : registry.names_with(CK_STAGE_READER)) {
        const PluginEntry& reader = registry.get(name);
        if (!reader.descriptor->probe) continue;
        if (call_plugin(name, [&] {
                return reader.descriptor->probe(sample.head, sample.size, sample.path.c_str());
            }))
            found.push_back(name);
    }
    return found;
}

std::string format_words(const PluginEntry& reader) {
    const std::string summary = reader.descriptor->summary ? reader.descriptor->summary : "";
    // "Hugging Face checkpoint folder (config.json, ...) with ...": the words before the first
    // parenthesis or clause.
    std::string words = summary.substr(0, summary.find_first_of("(:;,"));
    while (!words.empty() && words.back() == ' ') words.pop_back();
    if (words.empty()) return "a " + reader.name + " input";
    const bool vowel = std::string_view("AEIOUaeiou").find(words[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + words;
}

std::string refused_weights(const fs::path& input) {
    constexpr const char* why =
        "ckhost does not read pickles, because loading one runs whatever code the file names (a "
        "downloaded model could run anything on this machine); convert the checkpoint to "
        "safetensors first, where you trust it (with transformers: "
        "from_pretrained(FOLDER).save_pretrained(OUT, safe_serialization=True)), then read OUT "
        "with hf:";
    std::error_code ec;
    if (!fs::is_directory(input, ec)) {
        if (is_pickle_name(input.filename().string()))
            return std::string("it is a PyTorch pickle: ") + why;
        // A checkpoint's config.json stands for its folder, as for the hf reader.
        if (input.filename() != "config.json") return "";
    }
    const fs::path folder = fs::is_directory(input, ec)   ? input
                            : input.parent_path().empty() ? fs::path(".")
                                                          : input.parent_path();
    std::vector<std::string> pickles;
    bool safetensors = false;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        safetensors |= it->path().extension() == ".safetensors";
        if (is_pickle_name(name)) pickles.push_back(name);
    }
    if (pickles.empty() || safetensors) return "";
    std::sort(pickles.begin(), pickles.end());
    return "it holds PyTorch pickles (" + join(pickles) + ") and no safetensors: " + why;
}

}  // namespace ckhost
