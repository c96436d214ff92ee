// Names of a dense enum (values 0..N-1) kept in one array beside it: the name of a value and the
// value of a name, without a switch statement per direction that has to be kept in step.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace ck {

// names[value], or `fallback` for a value past the table.
template <class Enum, std::size_t N>
constexpr std::string_view enum_name(const std::array<std::string_view, N>& names, Enum value,
                                     std::string_view fallback = "invalid") noexcept {
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : fallback;
}

// The value whose name is `name`, if any.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> enum_from_name(const std::array<std::string_view, N>& names,
                                             std::string_view name) noexcept {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == name) return static_cast<Enum>(i);
    return std::nullopt;
}

}  // namespace ck
