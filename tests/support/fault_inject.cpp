// A test-only LD_PRELOAD library: it sits between ckhost and the C library's fsync,
// sync_file_range, rename and renameat2, so that the durability tests can see the order of those
// calls and make fsync fail the way a full or failing disk makes it fail, which no file system
// the tests can mount does on demand (tmpfs and ext4 report ENOSPC at write(), not at fsync()).
// Inactive unless asked:
//
//   CKFAULT_LOG=FILE            appends "fsync PATH", "rename FROM TO" and
//                               "sync_file_range PATH OFFSET LENGTH" lines to FILE
//   CKFAULT_FSYNC_ERRNO=N       fsync of a descriptor whose path contains CKFAULT_FSYNC_MATCH
//   CKFAULT_FSYNC_MATCH=TEXT    fails with errno N (the data is not synced);
//   CKFAULT_FSYNC_DIRS=1        only when the descriptor is a directory
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

template <class Fn>
Fn next(const char* name) {
    return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

std::string path_of(int fd) {
    char link[64], target[PATH_MAX];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(link, target, sizeof target - 1);
    return n < 0 ? std::string() : std::string(target, static_cast<std::size_t>(n));
}

void log_line(const std::string& line) {
    const char* log = std::getenv("CKFAULT_LOG");
    if (!log || !*log) return;
    const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const std::string text = line + "\n";
    if (::write(fd, text.data(), text.size()) < 0) {
    }
    ::close(fd);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int fsync(int fd) {
    const std::string path = path_of(fd);
    log_line("fsync " + path);
    const char* code = std::getenv("CKFAULT_FSYNC_ERRNO");
    const char* match = std::getenv("CKFAULT_FSYNC_MATCH");
    const char* dirs_only = std::getenv("CKFAULT_FSYNC_DIRS");
    struct stat st {};
    const bool is_dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    if (code && match && path.find(match) != std::string::npos && (!dirs_only || is_dir)) {
        errno = std::atoi(code);
        return -1;
    }
    static const auto real = next<int (*)(int)>("fsync");
    return real(fd);
}

extern "C" __attribute__((visibility("default"))) int sync_file_range(int fd, off64_t offset,
                                                                      off64_t length,
                                                                      unsigned int flags) {
    log_line("sync_file_range " + path_of(fd) + " " + std::to_string(offset) + " " +
             std::to_string(length));
    static const auto real = next<int (*)(int, off64_t, off64_t, unsigned int)>("sync_file_range");
    return real(fd, offset, length, flags);
}

extern "C" __attribute__((visibility("default"))) int rename(const char* from, const char* to) {
    log_line(std::string("rename ") + from + " " + to);
    static const auto real = next<int (*)(const char*, const char*)>("rename");
    return real(from, to);
}

extern "C" __attribute__((visibility("default"))) int renameat2(int from_dir, const char* from,
                                                                int to_dir, const char* to,
                                                                unsigned flags) {
    log_line(std::string("rename ") + from + " " + to);
    static const auto real =
        next<int (*)(int, const char*, int, const char*, unsigned)>("renameat2");
    return real(from_dir, from, to_dir, to, flags);
}
