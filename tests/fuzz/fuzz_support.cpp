#include "fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/metadata.hpp"

namespace fs = std::filesystem;

namespace ckfuzz {
namespace {

[[noreturn]] void system_failure(const std::string& what) {
    // The harness itself failed (no memfd, no temporary directory): not a finding in the code
    // under test, so say so plainly and stop.
    throw std::runtime_error("fuzz harness: " + what + ": " + std::strerror(errno));
}

// Keeps the compiler from dropping reads whose results are otherwise unused.
volatile unsigned char sink;

void touch(std::span<const std::byte> bytes) {
    if (bytes.empty()) return;
    sink = static_cast<unsigned char>(bytes.front()) ^ static_cast<unsigned char>(bytes.back());
}

void render(const ck::Value& value) {
    std::string shown = value.to_display();
    if (value.type() != ck::ValueType::array) return;
    const ck::ArrayValue& array = value.array();
    if (array.element_type() == ck::ValueType::string) {
        array.for_each_string([](std::string_view s) {
            sink = s.empty() ? 0 : static_cast<unsigned char>(s.back());
            return true;
        });
        return;
    }
    for (std::uint64_t i = 0; i < array.size(); ++i)
        shown = ck::Value::scalar(array.element_type(), array.raw_at(i)).to_display();
}

}  // namespace

ScratchFile::ScratchFile() {
    fd_ = ::memfd_create("ckfuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) system_failure("memfd_create");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
}

ScratchFile::~ScratchFile() {
    if (fd_ >= 0) ::close(fd_);
}

const fs::path& ScratchFile::write(std::span<const std::byte> bytes) {
    if (::ftruncate(fd_, 0) != 0) system_failure("ftruncate");
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n =
            ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) system_failure("pwrite");
        done += static_cast<std::size_t>(n);
    }
    return path_;
}

const fs::path& scratch_dir() {
    struct Dir {
        fs::path path;
        Dir() {
            const char* tmp = std::getenv("TMPDIR");
            std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ckfuzz-XXXXXX";
            if (!::mkdtemp(pattern.data())) system_failure("mkdtemp " + pattern);
            path = pattern;
        }
        ~Dir() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    };
    static const Dir dir;
    return dir.path;
}

void write_file(const fs::path& path, std::span<const std::byte> bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) system_failure("writing " + path.string());
}

void read_like_verify(ck::Reader& reader, const fs::path& path) {
    try {
        const ck::ModelHeader header = reader.open(path);
        for (const auto& [key, value] : header.metadata) {
            sink = key.empty() ? 0 : static_cast<unsigned char>(key.back());
            render(value);
        }
        for (const auto& t : header.tensors) {
            const std::string shown = t.shape_string() + std::string(ck::type_name(t.type));
            sink = shown.empty() ? 0 : static_cast<unsigned char>(shown.back());
        }
        for (std::size_t i = 0; i < header.tensors.size(); ++i) touch(reader.tensor(i).bytes());
        reader.verify();
    } catch (const ck::Error&) {
        // A refused file: what every bad input should end in.
    }
}

}  // namespace ckfuzz
