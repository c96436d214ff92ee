#include "ck/support/python_float.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace ck::support {
namespace {

// Shortest round-trip digits of `value` and the decimal exponent of the first digit, from
// std::to_chars in scientific form ("1.2345e-06" -> "12345", -6).
template <class Float>
std::pair<std::string, int> shortest_digits(Float value) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
    std::string text(buf, ec == std::errc() ? end : buf);
    std::size_t e = text.find('e');
    std::string digits;
    for (std::size_t i = 0; i < e; ++i)
        if (text[i] != '.') digits += text[i];
    int exponent = std::stoi(text.substr(e + 1));
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    return {digits, exponent};
}

}  // namespace

std::string python_float_repr(double value, bool single_precision) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
    std::string sign = std::signbit(value) ? "-" : "";
    value = std::fabs(value);
    auto [digits, exponent] =
        single_precision ? shortest_digits(static_cast<float>(value)) : shortest_digits(value);
    if (value == 0) return sign + "0.0";
    // Python (float_repr_style 'short', mode 'r'): decpt is where the point goes after the
    // first digit's position; exponent notation when decpt <= -4 or decpt > 16.
    const int decpt = exponent + 1;
    const int n = static_cast<int>(digits.size());
    if (decpt <= -4 || decpt > 16) {
        std::string mantissa = digits.substr(0, 1);
        if (n > 1) mantissa += "." + digits.substr(1);
        std::string digits_of_exponent = std::to_string(std::abs(exponent));
        if (digits_of_exponent.size() < 2) digits_of_exponent.insert(0, "0");
        return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + digits_of_exponent;
    }
    if (decpt <= 0)
        return sign + "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
    if (decpt >= n)
        return sign + digits + std::string(static_cast<std::size_t>(decpt - n), '0') + ".0";
    return sign + digits.substr(0, static_cast<std::size_t>(decpt)) + "." +
           digits.substr(static_cast<std::size_t>(decpt));
}

}  // namespace ck::support
