#include "pipeline/pipeline_spec.hpp"

#include <cctype>
#include <vector>

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

// The characters a backslash escapes inside brackets: those the grammar gives a meaning to (a
// value ends at ',' or ']', brackets and braces nest) and the backslash itself. Before any
// other character a backslash is kept as written, so a regular expression's `\.` or `\d`
// needs no doubling.
bool escapable(char c) {
    return c == ',' || c == ']' || c == '[' || c == '{' || c == '}' || c == '\\';
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
// Inside a value, `[...]` and `{...}` nest and belong to the value, commas and all, so shell
// globs (`blk.[01].attn_q*`, `blk.{0,1}.ffn_up.weight`) and regular expressions (`\d{1,3}`)
// need no escapes; a ',' or ']' outside them ends the option or the stage.
std::size_t parse_options(StageSpec& stage, const std::string& text, std::size_t open) {
    std::size_t pos = open + 1;
    std::size_t item_pos = pos;
    std::string item;
    bool empty_body = true;
    std::vector<std::size_t> nested;  // positions of the value's '[' and '{' not closed yet
    bool had_nested = false;
    while (true) {
        if (pos == text.size()) {
            if (!nested.empty())
                syntax_error(text, nested.back(),
                             std::string("'") + text[nested.back()] +
                                 "' is not closed (brackets and braces in a value must pair "
                                 "up; write \\" +
                                 text[nested.back()] + " for a literal one)");
            syntax_error(text, open,
                         had_nested ? "'[' without a closing ']' (brackets inside a value pair "
                                      "up, so a ']' there closed one of them: is a '[' or '{' "
                                      "of the value not closed?)"
                                    : "'[' without a closing ']'");
        }
        const char c = text[pos];
        if (c == '\\' && pos + 1 < text.size() && escapable(text[pos + 1])) {
            // An escaped closer still closes a group the value opened: values written before
            // groups existed (`str:[beta\]`, a chat template's `m['role'\]`) keep their meaning.
            // Escaped, it is never an error and never ends the option or the stage.
            const char e = text[pos + 1];
            if ((e == ']' || e == '}') && !nested.empty() &&
                text[nested.back()] == (e == ']' ? '[' : '{'))
                nested.pop_back();
            item += e;
            pos += 2;
            empty_body = false;
            continue;
        }
        if (c == '[' || c == '{') {
            nested.push_back(pos);
            had_nested = true;
        } else if ((c == ']' || c == '}') && !nested.empty()) {
            const char opened = text[nested.back()];
            if ((opened == '[') != (c == ']'))
                syntax_error(text, nested.back(),
                             std::string("'") + opened + "' is closed by '" + c +
                                 "' at character " + std::to_string(pos + 1));
            nested.pop_back();
        } else if (c == '}') {
            syntax_error(text, pos, "'}' without a '{' (write \\} for a literal one)");
        } else if ((c == ',' || c == ']') && nested.empty()) {
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

std::string stage_value(std::string_view value) {
    std::string escaped;
    for (char c : value) {
        if (escapable(c)) escaped += '\\';
        escaped += c;
    }
    return escaped;
}

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
