// only=GLOB / skip=GLOB tensor selection, for any transform that works on some tensors (dequant,
// quantize, repack), with the option descriptors that declare it. Patterns are ck::Glob shell
// globs (`*`, `?`, `[01]`, `[!x]`, `{a,b}`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ck/export.hpp"
#include "ck/glob.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"
#include "ck/plugin.hpp"

namespace ck {

class CK_SDK_API TensorFilter {
  public:
    // Usage errors for a malformed pattern (an unclosed '{').
    explicit TensorFilter(const Options& options);

    // Selected when it matches `only` (or there is none) and does not match `skip`.
    bool selects(const std::string& name) const;
    // Named by `only` (false without it): a tensor the user asked for by name or pattern, which
    // a stage may treat differently from one it reaches by default (dequant's 1-D tensors).
    bool chosen_by_only(const std::string& name) const;
    bool has_only() const noexcept { return only_.has_value(); }

    // A usage error naming the pattern and the closest tensor names when `only` or `skip`
    // matches none of `in`'s tensors, or the two together select none: a typo would otherwise
    // make the stage a silent no-op (or convert what should have been skipped). Call it from
    // plan(); `stage` names the stage in the message ("dequant").
    void check_matches(const ModelHeader& in, std::string_view stage) const;

    // The option descriptors for a plugin's table: {..., TensorFilter::only_option(
    // CK_STAGE_TRANSFORM), TensorFilter::skip_option(CK_STAGE_TRANSFORM), ...}.
    static constexpr ck_option_descriptor only_option(std::uint32_t stages) {
        return {"only", stages, nullptr, nullptr,
                "work only on tensors whose name matches this shell glob ({a,b} and [01] too)"};
    }
    static constexpr ck_option_descriptor skip_option(std::uint32_t stages) {
        return {"skip", stages, nullptr, nullptr,
                "leave tensors whose name matches this shell glob as they are"};
    }

  private:
    std::optional<Glob> only_, skip_;
};

}  // namespace ck
