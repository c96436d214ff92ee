#include "ck/byte_size.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace ck {
namespace {

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// The multiplier `unit` (upper case, without the number) names, or 0 when it names none.
std::uint64_t unit_scale(const std::string& unit, BareUnit bare) {
    if (unit.empty() || unit == "B") return 1;
    static constexpr std::string_view letters = "KMGT";
    const std::size_t power = letters.find(unit[0]) + 1;  // npos + 1 == 0: not a unit
    if (power == 0) return 0;
    const std::string_view rest = std::string_view(unit).substr(1);
    std::uint64_t base = 0;
    if (rest.empty())
        base = bare == BareUnit::binary ? 1024 : 1000;
    else if (rest == "B")
        base = 1000;
    else if (rest == "IB")
        base = 1024;
    else
        return 0;
    std::uint64_t scale = 1;
    for (std::size_t i = 0; i < power; ++i) scale *= base;
    return scale;
}

}  // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text, BareUnit bare) {
    // Digits, then an optional fraction, then the unit: nothing else (no sign, no spaces, no
    // exponent), so that what is accepted reads the same to every user.
    const auto digits_end = [&](std::size_t from) {
        while (from < text.size() && is_digit(text[from])) ++from;
        return from;
    };
    const std::size_t whole_end = digits_end(0);
    if (whole_end == 0) return std::nullopt;
    std::size_t number_end = whole_end;
    if (number_end < text.size() && text[number_end] == '.') {
        number_end = digits_end(whole_end + 1);
        if (number_end == whole_end + 1) return std::nullopt;  // "5." or "5.G"
    }
    std::string unit(text.substr(number_end));
    std::transform(unit.begin(), unit.end(), unit.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const std::uint64_t scale = unit_scale(unit, bare);
    if (scale == 0) return std::nullopt;
    constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t whole = 0;
    for (std::size_t i = 0; i < whole_end; ++i) {
        const auto digit = static_cast<std::uint64_t>(text[i] - '0');
        if (whole > (most - digit) / 10) return std::nullopt;
        whole = whole * 10 + digit;
    }
    if (whole > most / scale) return std::nullopt;
    std::uint64_t bytes = whole * scale;
    if (number_end > whole_end) {
        // The fraction's bytes: a long double holds 64 bits of mantissa, more than any fraction
        // of a unit (at most 2^40 bytes) needs.
        long double fraction = 0, place = 1;
        for (std::size_t i = whole_end + 1; i < number_end; ++i) {
            place /= 10;
            fraction += static_cast<long double>(text[i] - '0') * place;
        }
        const auto extra =
            static_cast<std::uint64_t>(std::floor(fraction * static_cast<long double>(scale)));
        if (bytes > most - extra) return std::nullopt;
        bytes += extra;
    }
    if (bytes == 0) return std::nullopt;
    return bytes;
}

std::string byte_size_forms(BareUnit bare) {
    return std::string("5000000 (bytes), 500K, 2G (K, M, G, T: powers of ") +
           (bare == BareUnit::binary ? "1024" : "1000") +
           "), 2GB (KB, MB, GB, TB: powers of 1000), 2GiB (KiB, MiB, GiB, TiB: powers of 1024)";
}

}  // namespace ck
