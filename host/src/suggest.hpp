// "did you mean ...": the closest names to a misspelt one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ckhost {

// Candidates within a small edit distance of `word`, closest first.
std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string>& candidates);
// "; did you mean 'x'?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");
// The inverse: "f32|f16" split at '|' is {"f32", "f16"}; "" is {""}.
std::vector<std::string> split_list(std::string_view text, char separator);

}  // namespace ckhost
