// The process's worker threads, shared by the host and every plugin (one pool per process, so
// nested and concurrent callers never oversubscribe the machine).
//
// Results must not depend on the thread count: split work into items whose boundaries depend
// only on the data (rows, fixed-size block ranges), let each item write its own output, and
// combine per-item statistics in item order afterwards. Then `--threads 1` and `--threads 64`
// produce the same bytes and the same figures.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

#include "ck/export.hpp"

namespace ck {

// The most threads --threads or CKHOST_THREADS may ask for.
inline constexpr unsigned max_threads = 4096;

// A thread count as written in CKHOST_THREADS: a whole number from 1 to max_threads, or nullopt.
CK_SDK_API std::optional<unsigned> parse_thread_count(const char* text) noexcept;

// CPUs this process may run on (its affinity mask, e.g. under taskset or a Slurm allocation),
// not the machine's total. At least 1.
CK_SDK_API unsigned available_cpus() noexcept;

// The threads work is spread over: CKHOST_THREADS when set to a positive number (the host's
// --threads sets it before any work starts), else available_cpus(). Read once.
CK_SDK_API unsigned thread_count() noexcept;

// Calls fn(i) for every i in [0, n) on the pool (the calling thread takes part) and returns
// when all have returned. Items may run in any order and at the same time; with one thread,
// or n == 1, they run here in order. When items throw, the first exception is rethrown here
// after the others have stopped (items not yet started are skipped). Calls may nest: an item
// may call parallel_for again.
CK_SDK_API void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

// parallel_for over [0, total) in chunks of `chunk` (the last may be shorter): fn(begin, end).
// The chunks depend only on `total` and `chunk`, never on the thread count.
template <class Fn>
void parallel_chunks(std::size_t total, std::size_t chunk, Fn&& fn) {
    if (total == 0) return;
    if (chunk == 0) chunk = 1;
    const std::size_t count = (total + chunk - 1) / chunk;
    parallel_for(count, [&](std::size_t i) {
        const std::size_t begin = i * chunk;
        fn(begin, begin + chunk < total ? begin + chunk : total);
    });
}

// Work started on the pool now and collected later: the host computes tensors ahead while the
// writer writes. With one thread nothing runs in the background: fn runs inside wait().
class CK_SDK_API Task {
  public:
    explicit Task(std::function<void()> fn);
    // Waits for fn when it was started and not yet waited for; its exception is dropped
    // (wait() is where errors are collected).
    ~Task();
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;

    // Returns once fn has returned; the caller takes part in the pool's work meanwhile.
    // Rethrows what fn threw. Calling it again returns (or rethrows) at once.
    void wait();

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace ck
