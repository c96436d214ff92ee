#include "progress.hpp"

#include <cstdio>

namespace ckhost {

std::string human_bytes(std::uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
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
