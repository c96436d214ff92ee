#include "ck/support/shell_quote.hpp"

namespace ck::support {

namespace {

bool plain(char c, bool first) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    switch (c) {
        case '_':
        case '-':
        case '+':
        case '.':
        case '/':
        case ':':
        case ',':
        case '@':
        case '%':
            return true;
        case '=':  // zsh expands `=cmd` at the start of a word to the command's path
            return !first;
        default:
            return false;
    }
}

}  // namespace

std::string shell_quote(std::string_view word) {
    bool safe = !word.empty();
    for (std::size_t i = 0; i < word.size() && safe; ++i) safe = plain(word[i], i == 0);
    if (safe) return std::string(word);
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += "'";
    return out;
}

}  // namespace ck::support
