// The pipeline grammar: `reader[:transform...]:writer`, each stage `name` or
// `name[key=value,key=value]`. Paths never go inside the pipeline string.
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
