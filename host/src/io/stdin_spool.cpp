#include "io/stdin_spool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/error.hpp"

namespace fs = std::filesystem;

namespace ckhost {
namespace {

constexpr const char* shown = "standard input";

fs::path spool_directory() {
    const char* tmpdir = std::getenv("TMPDIR");
    return tmpdir && *tmpdir ? fs::path(tmpdir) : fs::path("/tmp");
}

ck::Error spool_error(const fs::path& dir, const std::string& what) {
    return ck::Error("cannot copy standard input to " + dir.string() + " (TMPDIR): " + what + ": " +
                         std::strerror(errno),
                     shown);
}

// A file in `dir` that no name leads to: it goes when its last descriptor closes.
int nameless_file(const fs::path& dir) {
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string pattern = (dir / "ckhost-stdin-XXXXXX").string();
    fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0) throw spool_error(dir, "cannot create a file");
    ::unlink(pattern.c_str());
    return fd;
}

void copy_stdin_to(int fd, const fs::path& dir) {
    std::vector<char> buffer(1u << 20);
    for (;;) {
        ck::throw_if_interrupted();
        // A read from an idle pipe is restarted after Ctrl-C's handler (SA_RESTART); poll() is
        // not, so waiting here lets Ctrl-C stop ckhost while the producer is silent.
        pollfd ready{STDIN_FILENO, POLLIN, 0};
        if (::poll(&ready, 1, -1) < 0) {
            if (errno == EINTR) continue;
            throw ck::Error(std::string("cannot read: ") + std::strerror(errno), shown);
        }
        const ssize_t got = ::read(STDIN_FILENO, buffer.data(), buffer.size());
        if (got == 0) return;
        if (got < 0) {
            if (errno == EINTR) continue;
            throw ck::Error(std::string("cannot read: ") + std::strerror(errno), shown);
        }
        for (ssize_t done = 0; done < got;) {
            const ssize_t w = ::write(fd, buffer.data() + done, static_cast<size_t>(got - done));
            if (w < 0) {
                if (errno == EINTR) continue;
                throw spool_error(dir, "write failed");
            }
            done += w;
        }
    }
}

}  // namespace

StdinSpool::StdinSpool() {
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) != 0)
        throw ck::Error(std::string("cannot use it: ") + std::strerror(errno), shown);
    if (::isatty(STDIN_FILENO))
        throw ck::usage_error(
            "-i -: standard input is a terminal; pipe or redirect a model file into ckhost");
    // A redirected file read from its start is mapped as it is. (Read from elsewhere, as after
    // `head -c N` in the same shell group, only the rest is the input: copy that.)
    if (S_ISREG(st.st_mode) && ::lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
        path_ = "/proc/self/fd/" + std::to_string(STDIN_FILENO);
        return;
    }
    const fs::path dir = spool_directory();
    fd_ = nameless_file(dir);
    try {
        copy_stdin_to(fd_, dir);
    } catch (...) {
        ::close(fd_);
        throw;
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
}

StdinSpool::~StdinSpool() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace ckhost
