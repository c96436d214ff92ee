#include "ck/output.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/mapped_file.hpp"

namespace fs = std::filesystem;

namespace ck {
namespace {

constexpr std::size_t buffer_capacity = 4u << 20;
// How much of a synced output is written before its write-back is started (write_out).
constexpr std::uint64_t writeback_window = 8u << 20;
// copy_from's calls: large enough that the kernel copies at its speed, small enough that
// Ctrl-C is seen promptly.
constexpr std::uint64_t copy_chunk = 64u << 20;

// Everything here that fails is about an output, unless it says otherwise (an input that
// changed underneath us, a plugin bug): "kind": "output" in --json.
Error io_error(const fs::path& path, const std::string& what) {
    return output_error(what + ": " + std::strerror(errno), path.string());
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
        if (ec) throw output_error("cannot read the symbolic link: " + ec.message(), path.string());
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    throw output_error("too many levels of symbolic links", path.string());
}

const char* kind_of(fs::file_type type) {
    static constexpr std::pair<fs::file_type, const char*> kinds[] = {
        {fs::file_type::symlink, "a symbolic link"},
        {fs::file_type::directory, "a directory"},
        {fs::file_type::character, "a character device"},
        {fs::file_type::block, "a block device"},
        {fs::file_type::fifo, "a FIFO"},
        {fs::file_type::socket, "a socket"}};
    for (const auto& [kind, name] : kinds)
        if (kind == type) return name;
    return "not a regular file";
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

std::string OutputFile::shown_name() const {
    return streamed() ? "standard output" : final_.string();
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
        write_out(bytes.data(), n);
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
    // The host only streams for writers that declare they never patch (CK_PLUGIN_FLAG_STREAMS).
    if (streamed())
        throw plugin_bug(
            "the writer patches bytes it has already written, which a stream cannot take back; "
            "it must not declare that it streams (a plugin bug)",
            shown_name());
    if (offset + bytes.size() > size_)
        throw Error("patch past the end of the output", temp_.string());
    flush();
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t w = ::pwrite(fd_, bytes.data() + done, bytes.size() - done,
                             static_cast<off_t>(offset + done));
        if (w < 0) {
            if (errno == EINTR) continue;
            throw io_error(shown_name(), "write failed");
        }
        done += static_cast<std::size_t>(w);
    }
}

void OutputFile::write_out(const std::byte* p, std::size_t n) {
    const off_t start = sync_ && !streamed() ? ::lseek(fd_, 0, SEEK_CUR) : -1;
    write_all(fd_, p, n, shown_name());
    start_writeback(start, n);
}

// A file that will be fsync'ed at commit has its write-back started as it grows, a window at a
// time, so that the disk works while the conversion runs and the fsync at commit finds little
// left to write (on a 667 MB output here: 0.37 s of fsync became 0.02 s). SYNC_FILE_RANGE_WRITE
// starts the write-out and returns without waiting for it (unless the device's queue is full).
// It is a hint: where a file system cannot, the fsync does it all. `start` < 0: no hint.
void OutputFile::start_writeback(off_t start, std::size_t n) {
    if (start < 0) return;
    const std::uint64_t from = static_cast<std::uint64_t>(start) / writeback_window;
    const std::uint64_t to = (static_cast<std::uint64_t>(start) + n) / writeback_window;
    if (to > from)
        ::sync_file_range(fd_, static_cast<off_t>(from * writeback_window),
                          static_cast<off_t>((to - from) * writeback_window),
                          SYNC_FILE_RANGE_WRITE);
}

bool OutputFile::copy_from(const FileExtent& from, std::uint64_t size) {
    throw_if_interrupted();
    throw_if_finished();
    if (streamed() || from.file->descriptor() < 0) return false;  // a pipe: bytes are written
    flush();
    auto in_offset = static_cast<loff_t>(from.offset);
    std::uint64_t done = 0;
    while (done < size) {
        const off_t start = sync_ ? ::lseek(fd_, 0, SEEK_CUR) : -1;
        const auto chunk =
            static_cast<std::size_t>(std::min<std::uint64_t>(size - done, copy_chunk));
        const ssize_t n =
            ::copy_file_range(from.file->descriptor(), &in_offset, fd_, nullptr, chunk, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            // Where the kernel cannot copy between these files, the caller writes the bytes.
            if (done == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                              errno == EOPNOTSUPP || errno == EBADF))
                return false;
            throw io_error(shown_name(), "write failed");  // the output's side failed
        }
        // The input ended before the extent did: it shrank underneath the conversion.
        if (n == 0) throw input_changed_error(from.file->path());
        done += static_cast<std::uint64_t>(n);
        size_ += static_cast<std::uint64_t>(n);
        start_writeback(start, static_cast<std::size_t>(n));
        throw_if_interrupted();
    }
    return true;
}

void OutputFile::flush() {
    if (buffer_.empty()) return;
    write_out(buffer_.data(), buffer_.size());
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
    if (fd_ < 0) return;
    const int fd = std::exchange(fd_, -1);
    // The data must be on the disk before the rename makes it the target: otherwise a power
    // loss after the rename can leave an empty or partial file under the target's name. A
    // stream that is a pipe, a socket or a device cannot be synced (EINVAL) and needs not be;
    // standard output redirected to a file is.
    if (sync_ && ::fsync(fd) != 0 && !(streamed() && errno == EINVAL)) {
        const int saved = errno;
        ::close(fd);
        errno = saved;
        throw io_error(shown_name(), "fsync failed");
    }
    if (::close(fd) != 0) throw io_error(shown_name(), "close failed");
}

OutputSet::~OutputSet() {
    if (!committed_) abort();
}

bool OutputSet::stream_started() const noexcept {
    return stream_fd_ >= 0 && !files_.empty() &&
           files_.front()->size_ > files_.front()->buffer_.size();
}

namespace {

// This machine's name as temporary names carry it: a later run on the same machine can ask
// whether the process named in one is alive; a run on another machine sharing the directory
// (NFS, a cluster file system) or in another container (its own host name and pid numbers)
// cannot, and leaves the file alone. Characters outside [A-Za-z0-9._-] become '_'; at most 32
// are kept, so that names stay well within NAME_MAX.
const std::string& host_tag() {
    static const std::string tag = [] {
        utsname u{};
        std::string name = ::uname(&u) == 0 ? u.nodename : "";
        for (char& c : name)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
                c = '_';
        if (name.size() > 32) name.resize(32);
        return name.empty() ? std::string("host") : name;
    }();
    return tag;
}

// The part of a temporary name before the process id: ".NAME.ckhost-".
std::string temp_prefix(const fs::path& target) {
    return "." + target.filename().string() + ".ckhost-";
}

// The process id in `name` when it is exactly a temporary name that create() on this machine
// gives the target whose temp_prefix is `prefix`: PREFIX + PID + "-" + HOST + "-" + 6 letters
// or digits (mkstemp's). Anything else is nullopt.
std::optional<pid_t> temp_owner(std::string_view name, std::string_view prefix) {
    if (!name.starts_with(prefix)) return std::nullopt;
    name.remove_prefix(prefix.size());
    long pid = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec != std::errc() || end == name.data() || name.front() == '0' || pid <= 0 ||
        pid > std::numeric_limits<pid_t>::max())
        return std::nullopt;
    name.remove_prefix(static_cast<std::size_t>(end - name.data()));
    const std::string middle = "-" + host_tag() + "-";
    if (!name.starts_with(middle)) return std::nullopt;
    name.remove_prefix(middle.size());
    if (name.size() != 6 || !std::all_of(name.begin(), name.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0;
        }))
        return std::nullopt;
    return static_cast<pid_t>(pid);
}

// What /proc says of process `pid`: whether it is a zombie (ended, not yet reaped) and when it
// started, in seconds since the epoch; nullopt when /proc cannot tell.
struct ProcessFacts {
    bool zombie = false;
    double started = 0;
};

std::optional<ProcessFacts> process_facts(pid_t pid) {
    std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat_file, line)) return std::nullopt;
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so fields are counted
    // from the last ')'. STATE is field 3, the start time (clock ticks after boot) field 22.
    const auto close = line.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream fields(line.substr(close + 1));
    std::string field;
    ProcessFacts facts;
    unsigned long long ticks = 0;
    for (int number = 3; fields >> field; ++number) {
        if (number == 3) facts.zombie = field == "Z" || field == "X";
        if (number == 22) {
            ticks = std::strtoull(field.c_str(), nullptr, 10);
            break;
        }
    }
    std::ifstream system_stat("/proc/stat");
    long long boot = -1;
    while (std::getline(system_stat, line))
        if (line.starts_with("btime ")) boot = std::atoll(line.c_str() + 6);
    const long hz = ::sysconf(_SC_CLK_TCK);
    if (boot < 0 || hz <= 0) return std::nullopt;
    facts.started = static_cast<double>(boot) + static_cast<double>(ticks) / hz;
    return facts;
}

// True when the process that wrote a temporary file (pid `pid`, last written at `st`'s mtime)
// has certainly ended. A process with that pid may be another one that got the number later
// (pids are reused, and after a reboot they start again from 1): the writer was alive when it
// last wrote the file, so a process that started after that is not the writer. /proc's start
// time is rounded down (the boot time is whole seconds), which errs towards keeping the file;
// the one-second margin absorbs clock adjustments.
bool owner_has_ended(pid_t pid, const struct stat& st) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;  // EPERM: it exists (another user)
    const auto facts = process_facts(pid);
    if (!facts) return false;  // no /proc: assume the writer is alive
    const double written = static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9;
    return facts->zombie || facts->started > written + 1.0;
}

void sync_directory(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw io_error(dir, "cannot open the directory to fsync it");
    // Some file systems cannot sync a directory (EINVAL) and need not: their renames are
    // synchronous or they promise nothing either way.
    if (::fsync(fd) != 0 && errno != EINVAL) {
        const int saved = errno;
        ::close(fd);
        errno = saved;
        throw io_error(dir,
                       "fsync of the directory failed (the outputs are in place but may not "
                       "survive a crash)");
    }
    ::close(fd);
}

// The target may have changed since create() checked it: renaming is allowed over nothing,
// or over a regular file when overwriting, never over anything else.
void check_still_replaceable(const fs::path& target, const fs::path& final_path, bool overwrite) {
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(target, ec);
    if (status.type() == fs::file_type::not_found) return;
    if (status.type() != fs::file_type::regular)
        throw output_error(std::string("output became ") + kind_of(status.type()) +
                               " while converting; ckhost replaces only regular files",
                           final_path.string());
    if (!overwrite)
        throw output_error("output file appeared while converting (use --force to overwrite)",
                           final_path.string());
}

// rename(2), refusing to replace anything when `overwrite` is false (a file created at the
// target after the check above), where the file system supports it.
void rename_into_place(const fs::path& temp, const fs::path& target, const fs::path& final_path,
                       bool overwrite) {
    if (!overwrite) {
        if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0)
            return;
        if (errno == EEXIST)
            throw output_error("output file appeared while converting (use --force to overwrite)",
                               final_path.string());
        if (errno != EINVAL && errno != ENOSYS)
            throw io_error(final_path, "cannot rename into place");
    }
    if (::rename(temp.c_str(), target.c_str()) != 0)
        throw io_error(final_path, "cannot rename into place");
}

// The file that writing `final_path` replaces (symbolic links followed), after checking that
// it may be replaced: absent, or a regular file and overwriting is allowed.
fs::path replaceable_target(const fs::path& final_path, bool overwrite) {
    fs::path target = follow_links(final_path);
    std::error_code ec;
    const fs::file_status status = fs::status(target, ec);
    if (status.type() == fs::file_type::not_found) return target;
    if (status.type() != fs::file_type::regular)
        throw output_error(std::string("output is ") + kind_of(status.type()) +
                               "; ckhost replaces only regular files (or writes through a "
                               "symbolic link to one)",
                           final_path.string());
    if (!overwrite)
        throw output_error("output file exists (use --force to overwrite)", final_path.string());
    return target;
}

}  // namespace

void OutputSet::check_target(const fs::path& final_path) const {
    replaceable_target(final_path, overwrite_);
}

OutputFile& OutputSet::create(const fs::path& final_path) {
    if (stream_fd_ >= 0) {
        // The host streams only a writer that declared one file and no patching.
        if (!files_.empty())
            throw plugin_bug("the writer creates a second file, " + final_path.string() +
                                 ", but standard output holds one (a plugin bug)",
                             "standard output");
        const int fd = ::fcntl(stream_fd_, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) throw io_error("standard output", "cannot use it");
        files_.push_back(std::unique_ptr<OutputFile>(new OutputFile(final_path, {}, {}, fd)));
        files_.back()->sync_ = sync_;
        return *files_.back();
    }
    const fs::path target = replaceable_target(final_path, overwrite_);
    for (const auto& f : files_)
        if (f->final_path() == final_path || f->target_ == target)
            throw Error("output file written twice by one conversion", final_path.string());
    fs::path dir = target.parent_path();
    if (dir.empty()) dir = ".";
    // Create missing parents, remembering each so that a failed run can remove them again.
    const std::vector<fs::path> missing = missing_directories(dir);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        std::error_code ec;
        if (!fs::create_directory(*it, ec) && ec)
            throw output_error("cannot create directory: " + ec.message(), it->string());
        created_dirs_.push_back(*it);
    }
    std::string pattern =
        (dir / (temp_prefix(target) + std::to_string(::getpid()) + "-" + host_tag() + "-XXXXXX"))
            .string();
    int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0) throw io_error(final_path, "cannot create a temporary file beside the output");
    // A replaced file keeps its permissions; a new one gets the usual 0644.
    struct stat existing {};
    ::fchmod(fd, ::stat(target.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : 0644);
    files_.push_back(std::unique_ptr<OutputFile>(new OutputFile(final_path, target, pattern, fd)));
    files_.back()->sync_ = sync_;
    return *files_.back();
}

void OutputSet::commit() {
    // Nothing read from an input that changed underneath us is ever put in place.
    throw_if_input_changed();
    for (auto& f : files_) f->close();  // flushed, fsync'ed (unless --no-sync) and closed
    if (stream_fd_ >= 0) {
        committed_ = true;
        return;
    }
    // Every target is checked before the first rename, so that a set of files is not left half
    // replaced because of something found at its last target.
    for (auto& f : files_) check_still_replaceable(f->target_, f->final_path(), overwrite_);
    for (auto& f : files_)
        rename_into_place(f->temp_path(), f->target_, f->final_path(), overwrite_);
    committed_ = true;
    if (!sync_) return;
    // The renames, and the entries of directories we created, are durable only once the
    // directories holding them are synced.
    std::set<fs::path> dirs;
    auto parent_of = [](const fs::path& p) {
        return p.parent_path().empty() ? fs::path(".") : p.parent_path();
    };
    for (const auto& f : files_) dirs.insert(parent_of(f->target_));
    for (const auto& d : created_dirs_) dirs.insert(parent_of(d));
    for (const auto& d : dirs) sync_directory(d);
}

void OutputSet::abort() noexcept {
    for (auto& f : files_) {
        if (f->temp_path().empty()) continue;  // standard output: nothing to remove
        std::error_code ec;
        fs::remove(f->temp_path(), ec);
    }
    files_.clear();
    remove_empty_directories(std::exchange(created_dirs_, {}));
}

std::vector<fs::path> OutputSet::final_paths() const {
    std::vector<fs::path> out;
    for (const auto& f : files_) out.push_back(f->final_path());
    return out;
}

std::vector<fs::path> missing_directories(const fs::path& dir) {
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
        missing.push_back(p);
        if (p == p.parent_path()) break;
    }
    return missing;
}

void remove_empty_directories(std::vector<fs::path> dirs) noexcept {
    // Deepest first by the number of components of the absolute path, whatever order the
    // callers noted them in.
    const auto depth = [](const fs::path& p) {
        std::error_code ec;
        const fs::path absolute = fs::absolute(p, ec).lexically_normal();
        return std::distance(absolute.begin(), absolute.end());
    };
    std::stable_sort(dirs.begin(), dirs.end(),
                     [&](const fs::path& a, const fs::path& b) { return depth(a) > depth(b); });
    for (const fs::path& dir : dirs) {
        std::error_code ec;
        // fs::remove takes a file too: only a directory, and only while it is (still) empty.
        if (fs::is_directory(fs::symlink_status(dir, ec))) fs::remove(dir, ec);
    }
}

std::vector<StaleTemporary> remove_stale_temporaries(const std::vector<fs::path>& final_paths) {
    // The prefixes to look for, by directory: each directory is listed once, however many
    // outputs it holds (a split set of a hundred shards).
    std::map<fs::path, std::set<std::string>> prefixes;
    for (const auto& p : final_paths) {
        try {
            const fs::path target = follow_links(p);
            const fs::path dir = target.parent_path().empty() ? "." : target.parent_path();
            prefixes[dir].insert(temp_prefix(target));
        } catch (const Error&) {
            // A broken chain of links: create() will say so.
        }
    }
    std::vector<StaleTemporary> removed;
    for (const auto& [dir, wanted] : prefixes) {
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            std::optional<pid_t> pid;
            for (const auto& prefix : wanted)
                if ((pid = temp_owner(name, prefix))) break;
            if (!pid) continue;
            struct stat st {};
            if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            if (!owner_has_ended(*pid, st)) continue;
            if (::unlink(it->path().c_str()) == 0) removed.push_back({it->path(), *pid});
        }
    }
    return removed;
}

}  // namespace ck
