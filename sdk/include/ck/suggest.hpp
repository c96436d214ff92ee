// "Did you mean": the names closest to a misspelt name or to a pattern that matched nothing.
// In the SDK so that the host (stages, options, commands) and plugins (tensor selections)
// suggest the same way.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ck/export.hpp"
#include "ck/glob.hpp"

namespace ck {

// Candidates within a small edit distance of `word` (or starting with it), closest first.
CK_SDK_API std::vector<std::string> closest_names(std::string_view word,
                                                  const std::vector<std::string>& candidates);

// The `limit` candidates nearest to matching `glob` (Glob::distance), closest first, ties in
// the candidates' order. Always some when there are candidates: a pattern that matched nothing
// is best explained by the names it came nearest to.
CK_SDK_API std::vector<std::string> closest_matches(const Glob& glob,
                                                    const std::vector<std::string>& candidates,
                                                    std::size_t limit = 3);

}  // namespace ck
