// Shell globs on tensor and key names: fnmatch's `*`, `?`, `[abc]`, `[a-z]`, `[!x]` and `\x`,
// plus the shell's brace alternatives `{a,b}` (nested too), which fnmatch lacks and which
// users of llama.cpp's tools write from habit (`blk.{0,1}.ffn_up.weight`).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ck/export.hpp"

namespace ck {

class CK_SDK_API Glob {
  public:
    // Expands the braces once, here. A usage error for an unclosed '{' and for more than
    // `max_alternatives` alternatives (`{a,b}{a,b}...` grows exponentially).
    explicit Glob(std::string pattern);

    static constexpr std::size_t max_alternatives = 4096;

    bool matches(std::string_view name) const;
    // The fewest characters of `name` to insert, delete or replace for it to match (0 when it
    // matches): an edit distance in which `*` absorbs any run for free and `?` or a bracket
    // expression stands for one character. It ranks "closest names" for a pattern that matched
    // nothing, so a typo inside a wildcard pattern (`blk.*.fnn_*`) still finds `blk.0.ffn_up`.
    // Only the first 256 alternatives count, which bounds the cost of a suggestion.
    std::size_t distance(std::string_view name) const;

    const std::string& pattern() const noexcept { return pattern_; }
    // The brace-free fnmatch patterns the glob stands for, in the shell's order.
    const std::vector<std::string>& alternatives() const noexcept { return alternatives_; }

  private:
    std::string pattern_;
    std::vector<std::string> alternatives_;
};

}  // namespace ck
