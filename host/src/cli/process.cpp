#include "cli/process.hpp"

#include <sys/resource.h>

#include <csignal>
#include <cstdlib>

#include "batch/batch.hpp"
#include "ck/context.hpp"

namespace ckhost::cli {
namespace {

// Set when this process runs one job of a `ckhost batch` (the batch sets CKHOST_BATCH_JOB).
bool batch_job = false;

extern "C" void on_interrupt(int) {
    ck::request_interrupt();
    // A second Ctrl-C ends the process at once. Not in a batch job: the terminal's Ctrl-C and
    // the batch's forwarded signal both arrive, and the batch decides when to kill.
    if (batch_job) return;
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

extern "C" void on_batch_interrupt(int) {
    ckhost::batch_signal_received();
}

// Writers that make one file per tensor hold every output open until the atomic commit; a
// model with more tensors than the default soft limit of 1024 descriptors must not fail.
void raise_open_file_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

}  // namespace

void prepare_process() {
    batch_job = std::getenv("CKHOST_BATCH_JOB") != nullptr;
    raise_open_file_limit();
    // Past `ulimit -f` the kernel would kill us with SIGXFSZ, leaving the temporary file;
    // ignored, the write fails with EFBIG and the normal failure path cleans up.
    std::signal(SIGXFSZ, SIG_IGN);
}

void stop_on_interrupt() {
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
}

void stop_batch_on_interrupt() {
    std::signal(SIGINT, on_batch_interrupt);
    std::signal(SIGTERM, on_batch_interrupt);
}

}  // namespace ckhost::cli
