#include "pipeline_spec.hpp"

#include <cctype>

#include "ck/error.hpp"

namespace ckhost {
namespace {

[[noreturn]] void syntax_error(const std::string& text, std::size_t pos, const std::string& what) {
    throw ck::usage_error("pipeline '" + text + "', at character " + std::to_string(pos + 1) +
                          ": " + what);
}

bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

}  // namespace

std::vector<StageSpec> parse_pipeline(const std::string& text) {
    std::vector<StageSpec> stages;
    std::size_t pos = 0;
    if (text.empty())
        throw ck::usage_error("empty pipeline; expected reader[:transform...]:writer");
    while (true) {
        StageSpec stage;
        std::size_t start = pos;
        while (pos < text.size() && name_char(text[pos])) ++pos;
        stage.name = text.substr(start, pos - start);
        if (stage.name.empty()) syntax_error(text, pos, "expected a stage name");
        if (pos < text.size() && text[pos] == '[') {
            std::size_t close = text.find(']', pos);
            if (close == std::string::npos) syntax_error(text, pos, "'[' without a closing ']'");
            std::string body = text.substr(pos + 1, close - pos - 1);
            std::size_t item_start = 0;
            while (item_start <= body.size()) {
                std::size_t comma = body.find(',', item_start);
                if (comma == std::string::npos) comma = body.size();
                std::string item = body.substr(item_start, comma - item_start);
                std::size_t item_pos = pos + 1 + item_start;
                if (item.empty()) {
                    if (!body.empty()) syntax_error(text, item_pos, "empty option");
                } else {
                    std::size_t eq = item.find('=');
                    std::string key = item.substr(0, eq);
                    if (key.empty()) syntax_error(text, item_pos, "option without a name");
                    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
                    if (!stage.options.emplace(key, value).second)
                        syntax_error(text, item_pos, "option '" + key + "' given twice");
                }
                item_start = comma + 1;
            }
            pos = close + 1;
        }
        stage.text = text.substr(start, pos - start);
        stages.push_back(std::move(stage));
        if (pos == text.size()) break;
        if (text[pos] != ':')
            syntax_error(text, pos,
                         std::string("unexpected '") + text[pos] + "', expected ':' or '['");
        ++pos;
    }
    return stages;
}

}  // namespace ckhost
