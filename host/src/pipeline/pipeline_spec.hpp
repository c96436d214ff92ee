// The pipeline grammar: `reader[:transform...]:writer`, each stage `name` or
// `name[key=value,key=value]`. Inside a value, `[...]` and `{...}` pair up and belong to the
// value, commas included (shell globs, regular expressions). `\,` `\]` `\[` `\{` `\}` and `\\`
// stand for the character itself, outside the grammar; a backslash before any other character
// is kept as written. Paths never go inside the pipeline string (meta's set_file is the one
// exception).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ckhost {

struct StageSpec {
    std::string name;
    std::map<std::string, std::string> options;
    std::string text;  // the stage as written, for messages
};

// Throws ck::Error (usage) on a syntax error, naming the position.
std::vector<StageSpec> parse_pipeline(const std::string& text);

}  // namespace ckhost
