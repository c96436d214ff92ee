#include "model_name.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>
#include <vector>

namespace ckplugin::hf {
namespace {

bool is_lower_word(std::string_view w) {
    bool cased = false;
    for (char c : w) {
        if (std::isupper(static_cast<unsigned char>(c))) return false;
        if (std::islower(static_cast<unsigned char>(c))) cased = true;
    }
    return cased;
}

std::string title_case(std::string_view w) {
    std::string out;
    bool after_letter = false;
    for (char c : w) {
        const auto u = static_cast<unsigned char>(c);
        const bool letter = std::isalpha(u) != 0;
        out += letter ? static_cast<char>(after_letter ? std::tolower(u) : std::toupper(u)) : c;
        after_letter = letter;
    }
    return out;
}

}  // namespace

std::string title_from_folder(std::string_view folder) {
    std::string spaced(folder);
    for (char& c : spaced)
        if (c == '-') c = ' ';
    static const std::regex keep_as_is(R"(^(v\d+(?:\.\d+)*|\d.*)$)");
    std::istringstream words(spaced);
    std::string word, out;
    while (words >> word) {
        if (!out.empty()) out += ' ';
        out +=
            is_lower_word(word) && !std::regex_search(word, keep_as_is) ? title_case(word) : word;
    }
    return out;
}

std::string size_label(std::uint64_t parameters) {
    const double n = static_cast<double>(parameters);
    double scaled = n * 1e-3;
    const char* suffix = "K";
    if (n > 1e12) {
        scaled = n * 1e-12;
        suffix = "T";
    } else if (n > 1e9) {
        scaled = n * 1e-9;
        suffix = "B";
    } else if (n > 1e6) {
        scaled = n * 1e-6;
        suffix = "M";
    }
    // Python's round() rounds halves to even, as nearbyint does in the default rounding mode;
    // the digits of the integer part, leading zeros stripped, decide how many decimals follow.
    std::string integer = std::to_string(static_cast<long long>(std::nearbyint(scaled)));
    integer.erase(0, integer.find_first_not_of('0') == std::string::npos
                         ? integer.size()
                         : integer.find_first_not_of('0'));
    const int decimals = std::max(2 - static_cast<int>(integer.size()), 0);
    char text[64];
    std::snprintf(text, sizeof text, "%.*f%s", decimals, scaled, suffix);
    return text;
}

}  // namespace ckplugin::hf
