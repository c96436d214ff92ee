#include "ck/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/mapped_file.hpp"

namespace fs = std::filesystem;

namespace ck {
namespace {

constexpr std::size_t buffer_capacity = 4u << 20;

Error io_error(const fs::path& path, const std::string& what) {
    return Error(what + ": " + std::strerror(errno), path.string());
}

void write_all(int fd, const std::byte* p, std::size_t n, const fs::path& path) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            // The kernel could not read the source bytes: they are in an input mapping whose
            // file shrank underneath us. Blame the input, not the output.
            if (errno == EFAULT)
                if (auto input = mapped_input_at(p)) throw input_changed_error(*input);
            throw io_error(path, "write failed");
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

// Follows a chain of symbolic links to the path it finally names, which may not exist yet (a
// dangling link: writing through it creates its target).
fs::path follow_links(const fs::path& path) {
    fs::path p = path;
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
        fs::path target = fs::read_symlink(p, ec);
        if (ec) throw Error("cannot read the symbolic link: " + ec.message(), path.string());
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    throw Error("too many levels of symbolic links", path.string());
}

const char* kind_of(fs::file_type type) {
    switch (type) {
        case fs::file_type::directory:
            return "a directory";
        case fs::file_type::character:
            return "a character device";
        case fs::file_type::block:
            return "a block device";
        case fs::file_type::fifo:
            return "a FIFO";
        case fs::file_type::socket:
            return "a socket";
        default:
            return "not a regular file";
    }
}

}  // namespace

OutputFile::OutputFile(fs::path final_path, fs::path target, fs::path temp_path, int fd)
    : final_(std::move(final_path)),
      target_(std::move(target)),
      temp_(std::move(temp_path)),
      fd_(fd) {
    buffer_.reserve(buffer_capacity);
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(std::span<const std::byte> bytes) {
    throw_if_interrupted();
    throw_if_finished();
    size_ += bytes.size();
    // Small pieces gather in the buffer; a piece of a quarter of it or more (a tensor's 4 MiB
    // chunk) goes to the file as it is: copying it into the buffer first would add a memmove
    // of every tensor byte to a plain copy.
    if (bytes.size() < buffer_capacity / 4 && buffer_.size() + bytes.size() <= buffer_capacity) {
        buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
        return;
    }
    flush();
    // Large pieces go straight to the file in chunks, checking for Ctrl-C between them.
    while (bytes.size() >= buffer_capacity / 4) {
        const std::size_t n = std::min(bytes.size(), buffer_capacity);
        write_all(fd_, bytes.data(), n, final_);
        bytes = bytes.subspan(n);
        throw_if_interrupted();
    }
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void OutputFile::write_zeros(std::uint64_t count) {
    static const std::vector<std::byte> zeros(1u << 16);
    while (count > 0) {
        std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(count, zeros.size()));
        write(std::span(zeros.data(), n));
        count -= n;
    }
}

void OutputFile::write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
    throw_if_finished();
    if (offset + bytes.size() > size_)
        throw Error("patch past the end of the output", temp_.string());
    flush();
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t w = ::pwrite(fd_, bytes.data() + done, bytes.size() - done,
                             static_cast<off_t>(offset + done));
        if (w < 0) {
            if (errno == EINTR) continue;
            throw io_error(final_, "write failed");
        }
        done += static_cast<std::size_t>(w);
    }
}

void OutputFile::flush() {
    if (buffer_.empty()) return;
    write_all(fd_, buffer_.data(), buffer_.size(), final_);
    buffer_.clear();
}

void OutputFile::throw_if_finished() const {
    if (fd_ < 0)
        throw Error("written after the writer finished it (a plugin bug)", final_.string());
}

void OutputFile::finish() {
    close();
    std::vector<std::byte>().swap(buffer_);
}

void OutputFile::close() {
    flush();
    if (fd_ >= 0 && ::close(fd_) != 0) {
        fd_ = -1;
        throw io_error(final_, "close failed");
    }
    fd_ = -1;
}

OutputSet::~OutputSet() {
    if (!committed_) abort();
}

namespace {

// The file that writing `final_path` replaces (symbolic links followed), after checking that
// it may be replaced: absent, or a regular file and overwriting is allowed.
fs::path replaceable_target(const fs::path& final_path, bool overwrite) {
    fs::path target = follow_links(final_path);
    std::error_code ec;
    const fs::file_status status = fs::status(target, ec);
    if (status.type() == fs::file_type::not_found) return target;
    if (status.type() != fs::file_type::regular)
        throw Error(std::string("output is ") + kind_of(status.type()) +
                        "; ckhost replaces only regular files (or writes through a symbolic "
                        "link to one)",
                    final_path.string());
    if (!overwrite)
        throw Error("output file exists (use --force to overwrite)", final_path.string());
    return target;
}

}  // namespace

void OutputSet::check_target(const fs::path& final_path) const {
    replaceable_target(final_path, overwrite_);
}

OutputFile& OutputSet::create(const fs::path& final_path) {
    const fs::path target = replaceable_target(final_path, overwrite_);
    for (const auto& f : files_)
        if (f->final_path() == final_path || f->target_ == target)
            throw Error("output file written twice by one conversion", final_path.string());
    fs::path dir = target.parent_path();
    if (dir.empty()) dir = ".";
    // Create missing parents, remembering each so that a failed run can remove them again.
    std::vector<fs::path> missing;
    for (fs::path p = dir; !p.empty() && !fs::exists(p); p = p.parent_path()) {
        missing.push_back(p);
        if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        std::error_code ec;
        if (!fs::create_directory(*it, ec) && ec)
            throw Error("cannot create directory: " + ec.message(), it->string());
        created_dirs_.push_back(*it);
    }
    std::string pattern = (dir / ("." + target.filename().string() + ".ckhost-XXXXXX")).string();
    int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw io_error(final_path, "cannot create a temporary file beside the output");
    // A replaced file keeps its permissions; a new one gets the usual 0644.
    struct stat existing {};
    ::fchmod(fd, ::stat(target.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : 0644);
    files_.push_back(std::unique_ptr<OutputFile>(new OutputFile(final_path, target, pattern, fd)));
    return *files_.back();
}

void OutputSet::commit() {
    // Nothing read from an input that changed underneath us is ever put in place.
    throw_if_input_changed();
    for (auto& f : files_) f->close();
    for (auto& f : files_) {
        std::error_code ec;
        fs::rename(f->temp_path(), f->target_, ec);
        if (ec) throw Error("cannot rename into place: " + ec.message(), f->final_path().string());
    }
    committed_ = true;
}

void OutputSet::abort() noexcept {
    for (auto& f : files_) {
        std::error_code ec;
        fs::remove(f->temp_path(), ec);
    }
    files_.clear();
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) {
        std::error_code ec;
        fs::remove(*it, ec);  // only removes it if it is still empty
    }
    created_dirs_.clear();
}

std::vector<fs::path> OutputSet::final_paths() const {
    std::vector<fs::path> out;
    for (const auto& f : files_) out.push_back(f->final_path());
    return out;
}

}  // namespace ck
