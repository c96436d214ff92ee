// What every command shares on the command line: the global options (before or after the
// command name), --help, parsing with did-you-mean for unknown options, and the settings that
// reach plugins through the environment (--isa, --threads).
#pragma once

#include <boost/program_options.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ckhost::cli {

namespace po = boost::program_options;

struct Common {
    std::vector<std::string> plugin_dirs;
    std::string isa;
    long long threads = -1;  // -1: not given (CKHOST_THREADS, else the CPUs this process may use)
    std::string max_memory;  // "": not given (CKHOST_MAX_MEMORY, else default_max_memory())
    bool no_sync = false;    // false: not given (CKHOST_NO_SYNC, else sync)
    bool quiet = false;
    bool json = false;
    bool help = false;
};

// The global options: every command takes them, before or after the command name.
po::options_description global_options(Common& c);
// The global options and --help.
po::options_description common_options(Common& c);
// Every option of `options` as typed: --name, and -x for those with a short name.
std::vector<std::string> option_names(const po::options_description& options);

// Parses a command's arguments (`options`, and `arguments`: the positional ones, which the usage
// line names and the option list leaves out); with --help prints `usage` (which ends in a blank
// line) and the options instead, and returns true: the command has nothing more to do. Unknown
// options and stray arguments are usage errors.
bool parse_or_help(const std::vector<std::string>& args, const po::options_description& options,
                   const po::options_description& arguments,
                   const po::positional_options_description& positional, const Common& c,
                   std::string_view usage);

// The command line split at the command: the global options in front of it, as typed, and
// everything from the first other token on (the command name, or the convert options of the
// form without one).
struct Split {
    std::vector<std::string> globals;
    std::vector<std::string> rest;
};
Split split_at_command(const std::vector<std::string>& args);

// --max-memory, else CKHOST_MAX_MEMORY, in bytes; 0 when neither is given (the default).
std::uint64_t max_memory(const Common& c);
// Whether outputs are fsync'ed before their rename: not with --no-sync or CKHOST_NO_SYNC=1.
bool sync_outputs(const Common& c);
// Checks the global options and sets what reaches plugins through the environment (read once,
// when first used): --isa sets CKHOST_ISA, --threads sets CKHOST_THREADS.
void apply_globals(const Common& c);
std::vector<std::filesystem::path> to_paths(const std::vector<std::string>& dirs);

}  // namespace ckhost::cli
