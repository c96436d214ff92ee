// What a stage can tell the host while it runs: warnings, report entries, cancellation.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "ck/export.hpp"

namespace ck {

class CK_SDK_API Context {
  public:
    // A warning is printed on stderr (unless --quiet) and listed in the JSON report.
    void warn(std::string message);
    // A report entry; `json_value` must be valid JSON (a number, "string", object, ...).
    void report(std::string key, std::string json_value);

    const std::vector<std::string>& warnings() const noexcept { return warnings_; }
    const std::map<std::string, std::string>& reports() const noexcept { return reports_; }

  private:
    std::vector<std::string> warnings_;
    std::map<std::string, std::string> reports_;
};

// Ctrl-C: the host's signal handler sets this; long loops call throw_if_interrupted(), which
// also throws when an input changed while being read (ck/mapped_file.hpp).
CK_SDK_API void request_interrupt() noexcept;
CK_SDK_API bool interrupt_requested() noexcept;
CK_SDK_API void throw_if_interrupted();

}  // namespace ck
