#include "suggest.hpp"

#include <algorithm>
#include <numeric>

namespace ckhost {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), 0);
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t up = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(std::string_view word,
                                       const std::vector<std::string>& candidates) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(word, c);
        bool prefix = !word.empty() && c.rfind(word, 0) == 0;
        if (d <= limit || prefix) scored.emplace_back(prefix ? 0 : d, c);
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (auto& [d, c] : scored) out.push_back(c);
    return out;
}

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
