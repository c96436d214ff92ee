// What the fuzz targets share: a scratch file the input is written to (the readers take a path,
// not bytes), a scratch directory for formats that read files beside the input, and the walk
// `ckhost inspect` and `ckhost verify` make over an opened file.
//
// The same sources build two ways (tests/fuzz/CMakeLists.txt): with Clang's libFuzzer
// (-fsanitize=fuzzer,address,undefined), and in the normal build with replay_main.cpp, which
// runs every file of the regression corpus through LLVMFuzzerTestOneInput as a CTest test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "ck/context.hpp"
#include "ck/stage.hpp"

namespace ckfuzz {

// The fuzzer's bytes as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// One in-memory file (memfd) reused for every input of the process: rewriting it costs a
// truncate and a write, nothing touches the disk, and nothing is left behind after a crash.
// path() is /proc/self/fd/N, which every reader can open and map like a regular file.
class ScratchFile {
  public:
    ScratchFile();
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;
    ~ScratchFile();
    // Replaces the file's contents with `bytes` and returns its path.
    const std::filesystem::path& write(std::span<const std::byte> bytes);
    const std::filesystem::path& path() const noexcept { return path_; }

  private:
    int fd_ = -1;
    std::filesystem::path path_;
};

// A private directory under $TMPDIR (or /tmp), removed with everything in it when the process
// exits normally: for inputs that are several files (a split set, a bump file and the
// config.json beside it).
const std::filesystem::path& scratch_dir();
// Writes `bytes` to `path` (created or truncated).
void write_file(const std::filesystem::path& path, std::span<const std::byte> bytes);

// What `ckhost inspect` and `ckhost verify` do with a file: open it, render every metadata
// value (arrays element by element, as `inspect --kv` does: the GGUF reader decodes string
// arrays lazily), fetch every tensor and touch its first and last byte, then verify().
// ck::Error is the expected outcome for a bad file and is swallowed; anything else escapes to
// the fuzzer as a finding.
void read_like_verify(ck::Reader& reader, const std::filesystem::path& path);

// The whole of a target whose input is one whole file of a reader's format: written to a
// scratch file reused by the process, then read like `ckhost verify`.
template <class FormatReader>
int read_whole_file(const std::uint8_t* data, std::size_t size) {
    static ScratchFile file;
    const auto& path = file.write(std::as_bytes(std::span(data, size)));
    ck::RecordingContext context;
    FormatReader reader(context);
    read_like_verify(reader, path);
    return 0;
}

}  // namespace ckfuzz
