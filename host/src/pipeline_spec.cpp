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

// The characters a backslash escapes inside brackets: the two that would end a value, and the
// backslash itself. Before any other character a backslash is kept as written, so a regular
// expression's `\.` or `\d` needs no doubling.
bool escapable(char c) {
    return c == ',' || c == ']' || c == '\\';
}

void add_option(StageSpec& stage, const std::string& text, std::size_t item_pos,
                const std::string& item) {
    // '=' is never escaped, so the first one in the unescaped item is the first one written.
    std::size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    if (key.empty()) syntax_error(text, item_pos, "option without a name");
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (!stage.options.emplace(key, value).second)
        syntax_error(text, item_pos, "option '" + key + "' given twice");
}

// Parses the options of `name[...]` from the '[' at `open`; returns the position after ']'.
std::size_t parse_options(StageSpec& stage, const std::string& text, std::size_t open) {
    std::size_t pos = open + 1;
    std::size_t item_pos = pos;
    std::string item;
    bool empty_body = true;
    while (true) {
        if (pos == text.size()) syntax_error(text, open, "'[' without a closing ']'");
        const char c = text[pos];
        if (c == '\\' && pos + 1 < text.size() && escapable(text[pos + 1])) {
            item += text[pos + 1];
            pos += 2;
            empty_body = false;
            continue;
        }
        if (c == ',' || c == ']') {
            if (!item.empty())
                add_option(stage, text, item_pos, item);
            else if (c == ',' || !empty_body)  // `name[]` is no options; `[a,]`, `[,a]` are not
                syntax_error(text, item_pos, "empty option");
            item.clear();
            if (c == ']') return pos + 1;
            item_pos = ++pos;
            empty_body = false;
            continue;
        }
        item += c;
        ++pos;
        empty_body = false;
    }
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
        if (pos < text.size() && text[pos] == '[') pos = parse_options(stage, text, pos);
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
