// Progress on stderr (only when it is a terminal and not --quiet): bytes done / total, rate,
// ETA and the current tensor, redrawn at most ten times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ckhost {

class Progress {
  public:
    Progress(bool enabled, std::uint64_t total_bytes);
    void update(std::uint64_t done_bytes, const std::string& current);
    void finish();

  private:
    void draw(std::uint64_t done, const std::string& current);
    bool enabled_;
    std::uint64_t total_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    bool drawn_ = false;
};

std::string human_bytes(std::uint64_t bytes);
// "19.53 M": a count of parameters, as llama.cpp states the size of a model.
std::string human_count(std::uint64_t n);

}  // namespace ckhost
