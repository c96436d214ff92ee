#include "suggest.hpp"

namespace ckhost {

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    auto close = closest_names(word, candidates);
    if (close.empty()) return "";
    return "; did you mean '" + close.front() + "'?";
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += separator;
        out += items[i];
    }
    return out;
}

}  // namespace ckhost
