// only=GLOB / skip=GLOB tensor selection shared by the dequant and quantize stages.
#pragma once

#include <fnmatch.h>

#include <string>

#include "ck/options.hpp"

namespace ck::plugins {

class TensorFilter {
  public:
    explicit TensorFilter(const Options& options)
        : only_(options.get("only")), skip_(options.get("skip")) {}

    // Selected when it matches `only` (or there is none) and does not match `skip`.
    bool selects(const std::string& name) const {
        if (!only_.empty() && ::fnmatch(only_.c_str(), name.c_str(), 0) != 0) return false;
        if (!skip_.empty() && ::fnmatch(skip_.c_str(), name.c_str(), 0) == 0) return false;
        return true;
    }

  private:
    std::string only_, skip_;
};

}  // namespace ck::plugins
