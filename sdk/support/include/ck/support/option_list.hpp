// A stage option that takes several values (`adapter={a.gguf,b.gguf},scale={1,0.5}`): the
// pipeline grammar keeps a brace group, commas and all, as one value (docs/decisions/0011), and
// the stage splits it. Shared by the plugins that take lists and the host, which rewrites one
// (PEFT adapter folders in lora's adapter=, host/src/pipeline/peft_adapters.hpp).
#pragma once

#include <string>
#include <vector>

namespace ck::support {

// `value` as a list: "{a,b}" gives a and b (split at every comma), anything else is one value.
std::vector<std::string> option_list(const std::string& value);

// The inverse: one item as itself, several as "{a,b}".
std::string option_list_text(const std::vector<std::string>& items);

}  // namespace ck::support
