// "did you mean ...": the closest names to a misspelt one (the SDK's ck::closest_names).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ck/suggest.hpp"

namespace ckhost {

using ck::closest_names;
// "; did you mean 'x'?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");
// The inverse: "f32|f16" split at '|' is {"f32", "f16"}; "" is {""}.
std::vector<std::string> split_list(std::string_view text, char separator);

}  // namespace ckhost
