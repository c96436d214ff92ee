// What convert and the short commands that build a pipeline for it (quantize, split, merge)
// share: the options that decide how a conversion is run, and the run itself, so that --dry-run,
// --force, --update, --json and the global options behave the same in all of them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.hpp"

namespace ckhost::commands {

// What a conversion command line says, beyond the global options.
struct ConvertArgs {
    std::string pipeline, input, output;
    bool dry_run = false, force = false, update = false;
};

// A short command's positional argument: its NAME in the usage line, and the string it fills.
struct Argument {
    const char* name;
    std::string* value;
};
// `arguments` as positionals, one each, in order.
cli::Positionals positional_strings(const std::vector<Argument>& arguments);
// The first `required` of `arguments` must be given: a missing one is a usage error naming it,
// with the command's usage line `synopsis`.
void require_arguments(const std::vector<Argument>& arguments, std::size_t required,
                       std::string_view synopsis);

// `value` as a stage option's value in pipeline text: the characters the grammar gives a meaning
// inside brackets (, [ ] { } \) escaped, so that a value from the command line is one value.
std::string stage_value(std::string_view value);

// --dry-run, --force and --update, filling `a`.
void add_run_options(cli::po::options_description& options, ConvertArgs& a);

// Checks `a`, applies the global options and runs the conversion as `ckhost convert` does:
// warnings and notes on stderr, the plan for --dry-run, the report for --json. Returns the exit
// code; failures are thrown.
int run_conversion(const ConvertArgs& a, const cli::Common& c);

}  // namespace ckhost::commands
