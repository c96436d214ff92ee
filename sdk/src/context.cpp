#include "ck/context.hpp"

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/mapped_file.hpp"

namespace ck {
namespace {
std::atomic<bool> interrupted{false};
}

Context::~Context() = default;

void Context::report(std::string key, std::string json_value) {
    if (!nlohmann::json::accept(json_value))
        throw plugin_bug("reported a value that is not valid JSON under '" + key +
                         "' (a plugin bug)");
    record_report(std::move(key), std::move(json_value));
}

void RecordingContext::warn(std::string message) {
    std::lock_guard lock(mutex_);
    warnings_.push_back(std::move(message));
}
void RecordingContext::note(std::string message) {
    std::lock_guard lock(mutex_);
    notes_.push_back(std::move(message));
}
void RecordingContext::explain(std::string tensor, std::string reason) {
    std::lock_guard lock(mutex_);
    reasons_[std::move(tensor)].push_back(std::move(reason));
}
void RecordingContext::state_output_size(const std::filesystem::path& file, std::uint64_t bytes) {
    std::lock_guard lock(mutex_);
    output_sizes_[file] = bytes;
}
void RecordingContext::record_report(std::string key, std::string json_value) {
    std::lock_guard lock(mutex_);
    reports_[std::move(key)] = std::move(json_value);
}

void request_interrupt() noexcept {
    interrupted.store(true, std::memory_order_relaxed);
}
void clear_interrupt() noexcept {
    interrupted.store(false, std::memory_order_relaxed);
}
bool interrupt_requested() noexcept {
    return interrupted.load(std::memory_order_relaxed);
}
void throw_if_interrupted() {
    // The loops that poll for Ctrl-C are the same that must stop when an input changed.
    throw_if_input_changed();
    if (interrupt_requested()) throw interrupted_error();
}

}  // namespace ck
