// Runs another program (in practice ckhost itself, for one batch job) with its output captured.
// A job in its own process cannot take the batch down with it, whatever its plugins do.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ckhost {

struct ChildOutcome {
    int exit_code = -1;  // when it exited; -1 when a signal ended it
    int signal = 0;      // the signal that ended it, or 0
    std::string out;     // everything it wrote on stdout
    std::string err;     // and on stderr
};

// Starts argv[0] with argv, stdin from /dev/null and `extra_env` added to this process's
// environment, and waits for it. While it runs, `signal_to_send` is asked about ten times a
// second which signal it should get (0: none); each distinct signal is sent once.
// Throws ck::Error when the program cannot be started.
ChildOutcome run_child(const std::vector<std::string>& argv,
                       const std::vector<std::string>& extra_env,
                       const std::function<int()>& signal_to_send);

}  // namespace ckhost
