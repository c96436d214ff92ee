#include "ck/support/option_list.hpp"

namespace ck::support {

std::vector<std::string> option_list(const std::string& value) {
    if (value.size() < 2 || value.front() != '{' || value.back() != '}') return {value};
    std::vector<std::string> items;
    std::size_t start = 1;
    for (std::size_t comma; (comma = value.find(',', start)) != std::string::npos;
         start = comma + 1)
        items.push_back(value.substr(start, comma - start));
    items.push_back(value.substr(start, value.size() - 1 - start));
    return items;
}

std::string option_list_text(const std::vector<std::string>& items) {
    if (items.size() == 1) return items.front();
    std::string text = "{";
    for (std::size_t i = 0; i < items.size(); ++i) text += (i ? "," : "") + items[i];
    return text + "}";
}

}  // namespace ck::support
