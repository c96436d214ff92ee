#include "ck/glob.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "ck/error.hpp"

namespace ck {
namespace {

// Where the bracket expression opening at `open` ends (after its ']'), as fnmatch reads it: a
// ']' right after '[' or '[!' is a member. None when it never closes: the '[' is then literal.
std::optional<std::size_t> bracket_end(std::string_view s, std::size_t open) {
    std::size_t j = open + 1;
    if (j < s.size() && (s[j] == '!' || s[j] == '^')) ++j;
    if (j < s.size() && s[j] == ']') ++j;
    const std::size_t close = s.find(']', j);
    if (close == std::string_view::npos) return std::nullopt;
    return close + 1;
}

// Calls `stop(i)` for each character of `pattern` from `from` on that is neither escaped nor
// inside a bracket expression (where braces and commas are members, not syntax), until it
// returns true; returns that position, or npos.
template <class Stop>
std::size_t scan(const std::string& pattern, std::size_t from, Stop stop) {
    for (std::size_t i = from; i < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            ++i;
        } else if (auto end = pattern[i] == '[' ? bracket_end(pattern, i) : std::nullopt) {
            i = *end - 1;
        } else if (stop(i)) {
            return i;
        }
    }
    return std::string::npos;
}

// The brace group opening at `open`: its closing '}' and the top-level commas inside.
struct Braces {
    std::size_t close;
    std::vector<std::size_t> commas;
};

Braces find_braces(const std::string& pattern, std::size_t open) {
    Braces b{std::string::npos, {}};
    std::size_t depth = 0;
    b.close = scan(pattern, open, [&](std::size_t i) {
        const char c = pattern[i];
        if (c == ',' && depth == 1) b.commas.push_back(i);
        depth += c == '{';
        return c == '}' && --depth == 0;
    });
    if (b.close == std::string::npos)
        throw usage_error("glob '" + pattern + "': '{' at character " + std::to_string(open + 1) +
                          " is not closed");
    return b;
}

// Brace expansion as a shell does it, before any matching: `a{b,c}d` is `abd` and `acd`. A
// group without a top-level comma (`{x}`) is literal, as in bash.
void expand(const std::string& pattern, std::size_t from, const std::string& whole,
            std::vector<std::string>& out) {
    Braces group{};
    const std::size_t open = scan(pattern, from, [&](std::size_t i) {
        if (pattern[i] != '{') return false;
        group = find_braces(pattern, i);
        return !group.commas.empty();  // without one, literal: its inside is scanned on
    });
    if (open == std::string::npos) {
        if (out.size() == Glob::max_alternatives)
            throw usage_error("glob '" + whole + "': more than " +
                              std::to_string(Glob::max_alternatives) + " brace alternatives");
        out.push_back(pattern);
        return;
    }
    std::size_t start = open + 1;
    std::vector<std::size_t> ends = group.commas;
    ends.push_back(group.close);
    for (std::size_t end : ends) {
        // Everything before `open` is expanded already: go on from there.
        expand(pattern.substr(0, open) + pattern.substr(start, end - start) +
                   pattern.substr(group.close + 1),
               open, whole, out);
        start = end + 1;
    }
}

// One element of a brace-free pattern, for the distance: a character, `?`, `*` or a bracket
// expression (kept as text and matched by fnmatch, which knows ranges and classes).
struct Token {
    enum Kind { literal, any, star, bracket } kind;
    char c = 0;
    std::string text;
};

std::vector<Token> tokenize(std::string_view p) {
    std::vector<Token> tokens;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const char c = p[i];
        if (c == '\\' && i + 1 < p.size()) {
            tokens.push_back({Token::literal, p[++i], {}});
        } else if (c == '?') {
            tokens.push_back({Token::any, 0, {}});
        } else if (c == '*') {
            if (tokens.empty() || tokens.back().kind != Token::star)
                tokens.push_back({Token::star, 0, {}});
        } else if (auto end = c == '[' ? bracket_end(p, i) : std::nullopt) {
            tokens.push_back({Token::bracket, 0, std::string(p.substr(i, *end - i))});
            i = *end - 1;
        } else {
            tokens.push_back({Token::literal, c, {}});
        }
    }
    return tokens;
}

bool token_matches(const Token& t, char c) {
    switch (t.kind) {
        case Token::literal:
            return t.c == c;
        case Token::any:
            return true;
        case Token::bracket: {
            const char one[2] = {c, 0};
            return ::fnmatch(t.text.c_str(), one, 0) == 0;
        }
        default:
            return false;
    }
}

std::size_t token_distance(const std::vector<Token>& tokens, std::string_view name) {
    // Levenshtein over tokens x characters; a star costs nothing, whatever it absorbs.
    std::vector<std::size_t> previous(name.size() + 1), row(name.size() + 1);
    for (std::size_t j = 0; j <= name.size(); ++j) previous[j] = j;
    for (const Token& t : tokens) {
        const bool star = t.kind == Token::star;
        row[0] = previous[0] + (star ? 0 : 1);
        for (std::size_t j = 1; j <= name.size(); ++j) {
            row[j] = star ? std::min(previous[j], row[j - 1])
                          : std::min({previous[j - 1] + (token_matches(t, name[j - 1]) ? 0 : 1),
                                      previous[j] + 1, row[j - 1] + 1});
        }
        std::swap(previous, row);
    }
    return previous[name.size()];
}

}  // namespace

Glob::Glob(std::string pattern) : pattern_(std::move(pattern)) {
    expand(pattern_, 0, pattern_, alternatives_);
}

bool Glob::matches(std::string_view name) const {
    const std::string text(name);
    return std::any_of(alternatives_.begin(), alternatives_.end(), [&](const std::string& p) {
        return ::fnmatch(p.c_str(), text.c_str(), 0) == 0;
    });
}

std::size_t Glob::distance(std::string_view name) const {
    if (matches(name)) return 0;
    std::size_t best = std::numeric_limits<std::size_t>::max();
    // Only for suggestions, after nothing matched: the first alternatives are enough, and the
    // cost stays bounded for a pattern with thousands of them.
    const std::size_t considered = std::min<std::size_t>(alternatives_.size(), 256);
    for (std::size_t a = 0; a < considered; ++a)
        best = std::min(best, token_distance(tokenize(alternatives_[a]), name));
    return best;
}

}  // namespace ck
