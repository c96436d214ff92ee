#include "ck/context.hpp"

#include "ck/error.hpp"
#include "ck/mapped_file.hpp"

namespace ck {
namespace {
std::atomic<bool> interrupted{false};
}

void Context::warn(std::string message) {
    warnings_.push_back(std::move(message));
}
void Context::report(std::string key, std::string json_value) {
    reports_[std::move(key)] = std::move(json_value);
}

void request_interrupt() noexcept {
    interrupted.store(true, std::memory_order_relaxed);
}
bool interrupt_requested() noexcept {
    return interrupted.load(std::memory_order_relaxed);
}
void throw_if_interrupted() {
    // The loops that poll for Ctrl-C are the same that must stop when an input changed.
    throw_if_input_changed();
    if (interrupt_requested()) throw Error("interrupted", {}, {}, {}, ErrorKind::interrupt);
}

}  // namespace ck
