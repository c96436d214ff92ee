// A conversion that failed, with what the user needs beside the error itself: the warnings the
// stages gave before it (repack's "left as q4_K" explains the writer's refusal that follows)
// and, when one exists, a pipeline that plans where this one failed. Structured fields, so that
// the text output and the JSON report carry the same facts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ck/error.hpp"

namespace ckhost {

class ConversionError : public ck::Error {
  public:
    ConversionError(const ck::Error& error, std::vector<std::string> warnings,
                    std::string suggestion)
        : ck::Error(error.message(), error.file(), error.offset(), error.subject(), error.kind()),
          warnings_(std::move(warnings)),
          suggestion_(std::move(suggestion)) {}

    // Every warning given before the error, in order (the conversion's own; not the plugin
    // registry's).
    const std::vector<std::string>& warnings() const noexcept { return warnings_; }
    // A whole pipeline string that plans (headers only) on the same input and output, or "".
    const std::string& suggestion() const noexcept { return suggestion_; }

  private:
    std::vector<std::string> warnings_;
    std::string suggestion_;
};

}  // namespace ckhost
