// What a stage can tell the host while it runs (Context), what the host reads back
// (RecordingContext), and cancellation.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ck/export.hpp"

namespace ck {

// The calls a plugin may make. Plugins receive a Context& and never see what the host does
// with it.
class CK_SDK_API Context {
  public:
    virtual ~Context();
    // A warning is printed on stderr (unless --quiet) and listed in the JSON report.
    virtual void warn(std::string message) = 0;
    // An informational line (what a stage decided, a summary): printed on stderr unless
    // --quiet or --json, listed in the JSON report under "notes".
    virtual void note(std::string message) = 0;
    // A report entry under "reports" in --json output. `json_value` must be valid JSON (a
    // number, "string", object, ...): anything else throws a ck::Error naming the key, here,
    // so that the host's --json output is always valid.
    void report(std::string key, std::string json_value);
    // Why this stage gave a tensor what it has (its type, a new name): `--dry-run` prints the
    // reasons beside the tensor, and the JSON plan lists them. Facts the host acts on travel
    // typed (ABI 4), not as report strings it would have to parse back.
    virtual void explain(std::string tensor, std::string reason) = 0;
    // A writer states, in prepare(), the size one of its outputs will have (headers, padding
    // and all), so that `--dry-run` and `bytes_out` give the sizes written; without it the
    // host counts the tensors' bytes.
    virtual void state_output_size(const std::filesystem::path& file, std::uint64_t bytes) = 0;

  protected:
    virtual void record_report(std::string key, std::string json_value) = 0;
};

// The Context the host (and a test driving a stage in process) creates and reads back. Plugins
// may call it from any thread (the host computes several tensors at once); read it back only
// when no stage is running.
class CK_SDK_API RecordingContext final : public Context {
  public:
    void warn(std::string message) override;
    void note(std::string message) override;
    void explain(std::string tensor, std::string reason) override;
    void state_output_size(const std::filesystem::path& file, std::uint64_t bytes) override;

    const std::vector<std::string>& warnings() const noexcept { return warnings_; }
    const std::vector<std::string>& notes() const noexcept { return notes_; }
    const std::map<std::string, std::string>& reports() const noexcept { return reports_; }
    // Each tensor's reasons, in the order the stages gave them.
    const std::map<std::string, std::vector<std::string>>& reasons() const noexcept {
        return reasons_;
    }
    // The stated size of each output, by path; the last statement for a path counts.
    const std::map<std::filesystem::path, std::uint64_t>& output_sizes() const noexcept {
        return output_sizes_;
    }

  private:
    void record_report(std::string key, std::string json_value) override;
    std::mutex mutex_;
    std::vector<std::string> warnings_;
    std::vector<std::string> notes_;
    std::map<std::string, std::string> reports_;
    std::map<std::string, std::vector<std::string>> reasons_;
    std::map<std::filesystem::path, std::uint64_t> output_sizes_;
};

// Ctrl-C: the host's signal handler sets this; long loops call throw_if_interrupted(), which
// also throws when an input changed while being read (ck/mapped_file.hpp).
CK_SDK_API void request_interrupt() noexcept;
CK_SDK_API bool interrupt_requested() noexcept;
CK_SDK_API void throw_if_interrupted();
// Forgets an interrupt that has been dealt with, so that the host can still write what it owes
// afterwards (an interrupted `ckhost batch` writes its --report-dir report atomically, through
// OutputSet, whose writes stop on an interrupt). A later signal sets it again.
CK_SDK_API void clear_interrupt() noexcept;

}  // namespace ck
