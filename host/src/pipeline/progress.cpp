#include "pipeline/progress.hpp"

#include <cstdio>
#include <span>

namespace ckhost {

namespace {

// `value` in the largest of `units` (each `step` times the one before) that keeps it at least
// 1, with `decimals` after the point (none for the first unit, whose values are whole).
std::string scaled(std::uint64_t value, double step, std::span<const char* const> units,
                   int decimals) {
    double v = static_cast<double>(value);
    std::size_t u = 0;
    while (v >= step && u + 1 < units.size()) {
        v /= step;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f%s", u == 0 ? 0 : decimals, v, units[u]);
    return buf;
}

}  // namespace

std::string human_bytes(std::uint64_t bytes) {
    static constexpr const char* units[] = {" B", " KiB", " MiB", " GiB", " TiB"};
    return scaled(bytes, 1024, units, 1);
}

std::string human_count(std::uint64_t n) {
    static constexpr const char* units[] = {"", " K", " M", " B", " T"};
    return scaled(n, 1000, units, 2);
}

Progress::Progress(bool enabled, std::uint64_t total_bytes)
    : enabled_(enabled),
      total_(total_bytes),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::update(std::uint64_t done, const std::string& current) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    draw(done, current);
}

void Progress::draw(std::uint64_t done, const std::string& current) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    double eta = rate > 0 ? static_cast<double>(total_ - std::min(done, total_)) / rate : 0;
    int percent =
        total_ ? static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total_))
               : 100;
    std::string name = current.size() > 40 ? current.substr(0, 37) + "..." : current;
    std::fprintf(stderr, "\r\033[K[%3d%%] %s / %s  %s/s  ETA %.0fs  %s", percent,
                 human_bytes(done).c_str(), human_bytes(total_).c_str(),
                 human_bytes(static_cast<std::uint64_t>(rate)).c_str(), eta, name.c_str());
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::finish() {
    if (!enabled_ || !drawn_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
}

}  // namespace ckhost
