// Quoting for command lines that messages suggest: a hint such as
// `--pipeline 'gguf:dequant[to=f32]:bump'` must survive a copy-paste into bash or zsh, where
// unquoted brackets are a glob (zsh: "no matches found") and a space splits the word.
#pragma once

#include <string>
#include <string_view>

namespace ck::support {

// `word` unchanged when no POSIX shell treats any of its characters specially (letters,
// digits, _ - + . / : , @ % and = after the first character), otherwise in single quotes,
// with each ' written as '\''. The empty string is ''.
std::string shell_quote(std::string_view word);

}  // namespace ck::support
