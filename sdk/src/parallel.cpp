// The pool is oneTBB's: work stealing, nested parallel_for without deadlock, and exceptions
// carried to the caller. One task_arena, sized once by thread_count(), so every caller in the
// process (host, plugins, nested calls) shares the same threads.
#include "ck/parallel.hpp"

#include <sched.h>

#include <cstdlib>

#include <exception>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

namespace ck {
namespace {

tbb::task_arena& arena() {
    static tbb::task_arena pool(static_cast<int>(thread_count()));
    return pool;
}

}  // namespace

std::optional<unsigned> parse_thread_count(const char* text) noexcept {
    if (!text || !*text) return std::nullopt;
    char* end = nullptr;
    const unsigned long n = std::strtoul(text, &end, 10);
    if (*end != '\0' || n == 0 || n > max_threads) return std::nullopt;
    return static_cast<unsigned>(n);
}

unsigned available_cpus() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    const int n = CPU_COUNT(&set);
    return n > 0 ? static_cast<unsigned>(n) : 1u;
}

unsigned thread_count() noexcept {
    static const unsigned count = [] {
        // The host has refused a malformed value already; elsewhere it is ignored.
        return parse_thread_count(std::getenv("CKHOST_THREADS")).value_or(available_cpus());
    }();
    return count;
}

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
    if (n == 0) return;
    if (n == 1 || thread_count() == 1) {
        for (std::size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    // simple_partitioner with grain 1: every item is its own task, so a few large items (rows
    // of a big tensor, whole tensors) still spread over every thread.
    arena().execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, n, 1),
            [&](const tbb::blocked_range<std::size_t>& r) {
                for (std::size_t i = r.begin(); i < r.end(); ++i) fn(i);
            },
            tbb::simple_partitioner());
    });
}

struct Task::State {
    std::function<void()> fn;
    std::exception_ptr error;
    bool background = false;
    bool done = false;
    tbb::task_group group;
};

Task::Task(std::function<void()> fn) : state_(std::make_unique<State>()) {
    state_->fn = std::move(fn);
    if (thread_count() == 1) return;
    state_->background = true;
    State* state = state_.get();
    // task_group rather than an arena's enqueue: whoever waits for the group runs its pending
    // task, or helps with the task's own parallel_for, instead of sleeping.
    arena().execute([state] {
        state->group.run([state] {
            try {
                state->fn();
            } catch (...) {
                state->error = std::current_exception();
            }
        });
    });
}

Task::~Task() {
    if (state_->background && !state_->done) {
        State* state = state_.get();
        arena().execute([state] { state->group.wait(); });
    }
}

void Task::wait() {
    State& s = *state_;
    if (!s.done) {
        s.done = true;
        if (s.background) {
            State* state = &s;
            arena().execute([state] { state->group.wait(); });
        } else {
            try {
                s.fn();
            } catch (...) {
                s.error = std::current_exception();
            }
        }
    }
    if (s.error) std::rethrow_exception(s.error);
}

}  // namespace ck
