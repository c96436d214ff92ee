#include "batch/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "ck/error.hpp"

extern char** environ;

namespace ckhost {
namespace {

// A pipe whose ends close on exec: a child started by another thread meanwhile must not
// inherit this child's write end, or the reader here would never see end-of-file.
struct Pipe {
    int read = -1, write = -1;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0)
            throw ck::Error(std::string("cannot create a pipe: ") + std::strerror(errno));
        read = fds[0];
        write = fds[1];
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    void close_read() {
        if (read >= 0) ::close(read);
        read = -1;
    }
    void close_write() {
        if (write >= 0) ::close(write);
        write = -1;
    }
};

class SpawnActions {
  public:
    SpawnActions() { ::posix_spawn_file_actions_init(&actions_); }
    ~SpawnActions() { ::posix_spawn_file_actions_destroy(&actions_); }
    posix_spawn_file_actions_t* get() { return &actions_; }

  private:
    posix_spawn_file_actions_t actions_;
};

std::vector<char*> c_strings(std::vector<std::string>& items) {
    std::vector<char*> out;
    for (auto& s : items) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& argv,
                       const std::vector<std::string>& extra_env,
                       const std::function<int()>& signal_to_send) {
    Pipe out, err;
    SpawnActions actions;
    ::posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(actions.get(), out.write, 1);
    ::posix_spawn_file_actions_adddup2(actions.get(), err.write, 2);

    std::vector<std::string> args = argv, env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    auto c_args = c_strings(args), c_env = c_strings(env);

    pid_t pid = 0;
    if (int rc =
            ::posix_spawn(&pid, c_args[0], actions.get(), nullptr, c_args.data(), c_env.data()))
        throw ck::Error("cannot start " + argv[0] + ": " + std::strerror(rc));
    out.close_write();
    err.close_write();

    ChildOutcome outcome;
    std::set<int> sent;
    pollfd fds[2] = {{out.read, POLLIN, 0}, {err.read, POLLIN, 0}};
    std::string* sinks[2] = {&outcome.out, &outcome.err};
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        if (int sig = signal_to_send(); sig && sent.insert(sig).second) ::kill(pid, sig);
        int ready = ::poll(fds, 2, 100);
        if (ready < 0 && errno != EINTR)
            throw ck::Error(std::string("waiting for a job failed: ") + std::strerror(errno));
        for (int i = 0; i < 2 && ready > 0; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buffer[65536];
            ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0)
                sinks[i]->append(buffer, static_cast<std::size_t>(n));
            else if (n == 0 || errno != EINTR)
                fds[i].fd = -1;  // end of file (the Pipe closes the descriptor)
        }
    }

    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
    return outcome;
}

}  // namespace ckhost
