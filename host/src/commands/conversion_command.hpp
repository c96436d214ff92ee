// What convert and the short commands that build a pipeline for it (quantize, split, merge)
// share: the options that decide how a conversion is run, and the run itself, so that --dry-run,
// --force, --update, --json and the global options behave the same in all of them.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.hpp"
#include "pipeline/pipeline_spec.hpp"

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

// A reference tool's flag that is one stage option: `--FLAG VALUE` gives option=VALUE, a switch
// (no `value_name`) gives option=1. The help names the option, so the two stay findable.
struct StageFlag {
    const char* flag;        // e.g. "output-tensor-type"
    const char* option;      // e.g. "output_type"
    const char* value_name;  // e.g. "T"; nullptr for a switch
    const char* help;
};

// The values a command line gave a command's stage flags.
class StageFlagValues {
  public:
    explicit StageFlagValues(std::span<const StageFlag> flags) : flags_(flags) {}
    // One option per flag, filling this object; "(option=...)" is appended to each help.
    void add_to(cli::po::options_description& options);
    // The value given for `option`'s flag ("1" for a switch given), empty when not given.
    const std::string& value(std::string_view option) const;
    // "a=V,b=1" in the flags' order, values escaped as stage_value does; empty when none.
    std::string stage_options() const;

  private:
    std::span<const StageFlag> flags_;
    std::map<std::string, std::string, std::less<>> values_;
    std::map<std::string, bool, std::less<>> switches_;
};

// --dry-run, --force and --update, filling `a`.
void add_run_options(cli::po::options_description& options, ConvertArgs& a);

// Checks `a`, applies the global options and runs the conversion as `ckhost convert` does:
// warnings and notes on stderr, the plan for --dry-run, the report for --json. Returns the exit
// code; failures are thrown.
int run_conversion(const ConvertArgs& a, const cli::Common& c);

}  // namespace ckhost::commands
