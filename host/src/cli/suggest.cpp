#include "cli/suggest.hpp"

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

std::vector<std::string> split_list(std::string_view text, char separator) {
    std::vector<std::string> items;
    for (std::size_t at = 0; at <= text.size();) {
        const std::size_t end = std::min(text.find(separator, at), text.size());
        items.emplace_back(text.substr(at, end - at));
        at = end + 1;
    }
    return items;
}

}  // namespace ckhost
