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
// Every option of `options` as typed: --name, and -x for those with a short name.
std::vector<std::string> option_names(const po::options_description& options);

// A command's positional arguments: which option each position fills (`order`), and the options
// that only positions fill (`arguments`: the usage line names them, the option list leaves them
// out).
struct Positionals {
    po::options_description arguments;
    po::positional_options_description order;
};
// The one positional argument most commands take: `name`, filling `value`, `count` times (-1: any
// number of times).
Positionals positional_argument(const char* name, const po::value_semantic* value, int count);

// The global options a command makes use of, as bits. Every command accepts all of them, before
// or after its name (a shell alias or a script may put --no-sync in front of any command), but
// its help and its completions list only those that change what it does.
enum GlobalUse : unsigned {
    uses_plugin_dir = 1u << 0,
    uses_isa = 1u << 1,
    uses_threads = 1u << 2,
    uses_max_memory = 1u << 3,
    uses_no_sync = 1u << 4,
    uses_quiet = 1u << 5,
    uses_json = 1u << 6,
    uses_every_global = (1u << 7) - 1,
};

// What every command does first, so that all of them list, parse and explain their options alike:
// `options` (the command's own) gets the global options it `uses` and --help after them. With
// `options_out`, only their names are listed (for completion); else `args` are parsed (every
// global option is accepted), and with --help `usage` (which ends in a blank line) and the
// options are printed. Unknown options and stray arguments are usage errors. True when the
// command has nothing more to do: it listed its options or printed its help.
bool list_or_parse(const std::vector<std::string>& args, po::options_description& options,
                   const Positionals& positionals, Common& c, std::string_view usage,
                   std::vector<std::string>* options_out, unsigned uses = uses_every_global);

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
