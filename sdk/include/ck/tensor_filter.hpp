// only=GLOB / skip=GLOB tensor selection, for any transform that works on some tensors (dequant,
// quantize, repack), with the option descriptors that declare it.
#pragma once

#include <fnmatch.h>

#include <string>

#include "ck/options.hpp"
#include "ck/plugin.hpp"

namespace ck {

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

    // The option descriptors for a plugin's table: {..., TensorFilter::only_option(
    // CK_STAGE_TRANSFORM), TensorFilter::skip_option(CK_STAGE_TRANSFORM), ...}.
    static constexpr ck_option_descriptor only_option(std::uint32_t stages) {
        return {"only", stages, nullptr, nullptr,
                "work only on tensors whose name matches this shell glob"};
    }
    static constexpr ck_option_descriptor skip_option(std::uint32_t stages) {
        return {"skip", stages, nullptr, nullptr,
                "leave tensors whose name matches this shell glob as they are"};
    }

  private:
    std::string only_, skip_;
};

}  // namespace ck
