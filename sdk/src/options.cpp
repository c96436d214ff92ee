#include "ck/options.hpp"

#include <charconv>

#include "ck/error.hpp"

namespace ck {

std::string Options::get(const std::string& key, const std::string& fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
}

std::uint64_t Options::get_u64(const std::string& key, std::uint64_t fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string& s = it->second;
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
        throw usage_error("option " + key + "=" + s + ": expected a non-negative integer");
    return v;
}

bool Options::get_bool(const std::string& key, bool fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string& s = it->second;
    if (s == "1" || s == "true" || s == "yes" || s.empty()) return true;
    if (s == "0" || s == "false" || s == "no") return false;
    throw usage_error("option " + key + "=" + s + ": expected 1, 0, true, false, yes or no");
}

}  // namespace ck
