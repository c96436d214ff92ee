// One function per command (cli.md), each in its own file here. Each takes the command's
// arguments (after its name, with the global options given before it in front) and returns the
// exit code; with `options_out` it only lists the options it takes (for completion), doing
// nothing else. cli/command_table.cpp names them.
#pragma once

#include <string>
#include <vector>

namespace ckhost::commands {

using Args = std::vector<std::string>;
using OptionList = std::vector<std::string>;

int convert(const Args& args, OptionList* options_out);
int inspect(const Args& args, OptionList* options_out);
int verify(const Args& args, OptionList* options_out);
int plugins(const Args& args, OptionList* options_out);
int batch(const Args& args, OptionList* options_out);
int batch_report(const Args& args, OptionList* options_out);
int completion(const Args& args, OptionList* options_out);
int quantize(const Args& args, OptionList* options_out);
int split(const Args& args, OptionList* options_out);
int merge(const Args& args, OptionList* options_out);
int convert_lora(const Args& args, OptionList* options_out);
int export_lora(const Args& args, OptionList* options_out);
int compare(const Args& args, OptionList* options_out);
// `ckhost help TOPIC [global options]`: the command's help, the stage's, or both (help.cpp).
int help_topic(const std::string& topic, const Args& args);

}  // namespace ckhost::commands
