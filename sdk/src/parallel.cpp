// The pool is oneTBB's: work stealing, nested parallel_for without deadlock, and exceptions
// carried to the caller. One task_arena, sized once by thread_count(), so every caller in the
// process (host, plugins, nested calls) shares the same threads.
#include "ck/parallel.hpp"

#include <sched.h>

#include <cstdlib>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

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

}  // namespace ck
