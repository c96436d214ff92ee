#include "ck/suggest.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ck {
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

// The candidates in order of their scores, best first, ties in the candidates' order.
std::vector<std::string> by_score(std::vector<std::pair<std::size_t, std::string>> scored) {
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    out.reserve(scored.size());
    for (auto& entry : scored) out.push_back(std::move(entry.second));
    return out;
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
    return by_score(std::move(scored));
}

std::vector<std::string> closest_matches(const Glob& glob,
                                         const std::vector<std::string>& candidates,
                                         std::size_t limit) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    scored.reserve(candidates.size());
    for (const auto& c : candidates) scored.emplace_back(glob.distance(c), c);
    std::vector<std::string> out = by_score(std::move(scored));
    if (out.size() > limit) out.resize(limit);
    return out;
}

}  // namespace ck
