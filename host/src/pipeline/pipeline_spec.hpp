// The pipeline grammar: `reader[:transform...]:writer`, each stage `name` or
// `name[key=value,key=value]`. Inside a value, `[...]` and `{...}` pair up and belong to the
// value, commas included (shell globs, regular expressions). `\,` `\]` `\[` `\{` `\}` and `\\`
// stand for the character itself, outside the grammar; a backslash before any other character
// is kept as written. Paths go inside the pipeline string only for files a stage reads besides
// the input (meta's set_file, quantize's imatrix, lora's adapter and base).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ckhost {

struct StageSpec {
    std::string name;
    std::map<std::string, std::string> options;
    std::string text;  // the stage as written, for messages
};

// `value` as a stage option's value in pipeline text: the characters the grammar gives a meaning
// inside brackets (, [ ] { } \) escaped, so that a value from the command line is one value.
std::string stage_value(std::string_view value);

// Throws ck::Error (usage) on a syntax error, naming the position.
std::vector<StageSpec> parse_pipeline(const std::string& text);

}  // namespace ckhost
