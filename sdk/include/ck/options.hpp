// Stage options: the `key=value` pairs in a pipeline stage's brackets.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ck/export.hpp"

namespace ck {

// Options a stage was given. The host has already rejected names the plugin did not declare
// and values outside a declared list of choices; typed getters raise usage errors on bad values.
class CK_SDK_API Options {
  public:
    Options() = default;
    explicit Options(std::map<std::string, std::string> values) : values_(std::move(values)) {}

    bool has(const std::string& key) const { return values_.count(key) != 0; }
    std::string get(const std::string& key, const std::string& fallback = {}) const;
    std::uint64_t get_u64(const std::string& key, std::uint64_t fallback) const;
    bool get_bool(const std::string& key, bool fallback) const;
    const std::map<std::string, std::string>& all() const noexcept { return values_; }

  private:
    std::map<std::string, std::string> values_;
};

}  // namespace ck
