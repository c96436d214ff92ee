#include "cli/command_line.hpp"

#include <cstdlib>
#include <iostream>
#include <system_error>

#include "ck/byte_size.hpp"
#include "ck/cpu.hpp"
#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "ck/support/shell_quote.hpp"
#include "cli/suggest.hpp"

namespace fs = std::filesystem;

namespace ckhost::cli {

namespace {
constexpr const char* global_options_caption = "global options (before or after the command)";
}  // namespace

// The global options: every command takes them, before or after the command name.
po::options_description global_options(Common& c) {
    po::options_description d(global_options_caption);
    d.add_options()("plugin-dir", po::value(&c.plugin_dirs)->composing(),
                    "search DIR for plugins first (repeatable)")(
        "isa", po::value(&c.isa),
        "force a lower kernel variant: scalar|avx2|avx512 (x86-64), scalar|neon (ARM64); sets "
        "CKHOST_ISA")(
        "threads", po::value(&c.threads),
        "worker threads (default: CKHOST_THREADS, else the CPUs this process may use)")(
        "max-memory", po::value(&c.max_memory),
        "bytes of tensors computed ahead of the writer, e.g. 2G (K, M, G: powers of 1024; KB, "
        "MB, GB: of 1000; default: CKHOST_MAX_MEMORY, else a quarter of RAM)")(
        "no-sync", po::bool_switch(&c.no_sync),
        "do not fsync outputs before renaming them into place (scratch work; default: "
        "CKHOST_NO_SYNC=1, else sync)")("quiet,q", po::bool_switch(&c.quiet),
                                        "no progress, warnings or summary on stderr")(
        "json", po::bool_switch(&c.json), "machine-readable output on stdout");
    return d;
}

// Every option of `options` as typed: --name, and -x for those with a short name.
std::vector<std::string> option_names(const po::options_description& options) {
    std::vector<std::string> names;
    for (const auto& o : options.options()) {
        if (!o->long_name().empty()) names.push_back("--" + o->long_name());
        const std::string shown = o->format_name();  // "-q [ --quiet ]"
        if (shown.size() >= 2 && shown[0] == '-' && shown[1] != '-')
            names.push_back(shown.substr(0, 2));
    }
    return names;
}

// Parses one command's arguments (after the command name); unknown options and stray
// arguments are usage errors.
namespace {

// Boost's "too many positional options" in the user's words: which argument is one too many,
// and when it looks like a pipeline (it has a ':'), that --pipeline was forgotten.
std::string too_many_arguments(const std::vector<std::string>& args,
                               const po::positional_options_description& positional) {
    std::vector<std::string> plain;
    for (const std::string& a : args)
        if (!a.starts_with("-")) plain.push_back(a);
    const unsigned takes = positional.max_total_count();
    std::string extra = plain.size() > takes ? plain[takes] : std::string();
    for (const std::string& a : plain)
        if (a.find(':') != std::string::npos && a.find('/') == std::string::npos)
            return "unexpected argument '" + a + "': a pipeline is given with --pipeline (e.g. " +
                   "--pipeline " + a + ")";
    if (takes == 0)
        return "this command takes no arguments" + (extra.empty() ? "" : ", got '" + extra + "'");
    return "too many arguments" + (extra.empty() ? "" : ": '" + extra + "' is one too many") +
           " (this command takes " + std::to_string(takes) + ")";
}

po::variables_map parse(const std::vector<std::string>& args,
                        const po::options_description& options,
                        const po::positional_options_description& positional) {
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
        po::notify(vm);
    } catch (const po::unknown_option& e) {
        // `--josn`: the closest of this command's options, as for stage and option names.
        const std::string given = e.get_option_name();
        throw ck::usage_error(
            std::string(e.what()) +
            ckhost::did_you_mean(given.substr(0, given.find('=')), option_names(options)));
    } catch (const po::too_many_positional_options_error&) {
        throw ck::usage_error(too_many_arguments(args, positional));
    } catch (const po::error& e) {
        throw ck::usage_error(e.what());
    }
    return vm;
}

}  // namespace

Positionals positional_argument(const char* name, const po::value_semantic* value, int count) {
    Positionals positionals;
    positionals.arguments.add_options()(name, value);
    positionals.order.add(name, count);
    return positionals;
}

namespace {

// The GlobalUse bit of a global option, by its long name.
unsigned global_use_bit(const std::string& long_name) {
    static const std::pair<const char*, unsigned> bits[] = {{"plugin-dir", uses_plugin_dir},
                                                            {"isa", uses_isa},
                                                            {"threads", uses_threads},
                                                            {"max-memory", uses_max_memory},
                                                            {"no-sync", uses_no_sync},
                                                            {"quiet", uses_quiet},
                                                            {"json", uses_json}};
    for (const auto& [name, bit] : bits)
        if (long_name == name) return bit;
    return uses_every_global;
}

}  // namespace

// The positional-only options, and the global options the command does not use, are parsed but
// left out of --help's option list: the usage line names the former, the latter change nothing.
bool list_or_parse(const std::vector<std::string>& args, po::options_description& options,
                   const Positionals& positionals, Common& c, std::string_view usage,
                   std::vector<std::string>* options_out, unsigned uses) {
    const po::options_description globals = global_options(c);
    po::options_description shown(global_options_caption), unused;
    for (const auto& option : globals.options())
        ((uses & global_use_bit(option->long_name())) != 0 ? shown : unused).add(option);
    shown.add_options()("help,h", po::bool_switch(&c.help), "show this help");
    options.add(shown);
    if (options_out) {
        *options_out = option_names(options);
        return true;
    }
    po::options_description all;
    all.add(options).add(unused).add(positionals.arguments);
    parse(args, all, positionals.order);
    if (!c.help) return false;
    std::cout << usage << options;
    if (!unused.options().empty())
        std::cout << "\nThe other global options are accepted here and change nothing.\n";
    return true;
}

namespace {

// The global option `token` names (`--json`, `--isa=X`, `--plugin-dir`, `-q`), by exact name, or
// nullptr: an abbreviation or a group of short options ends the global part, and is left to the
// command's parser, which knows all of the command's options.
const po::option_description* global_option(const std::string& token,
                                            const po::options_description& globals) {
    if (token.size() > 2 && token.compare(0, 2, "--") == 0)
        return globals.find_nothrow(token.substr(2, token.find('=') - 2), false);
    if (token.size() == 2 && token[0] == '-' && token[1] != '-')
        return globals.find_nothrow(token, false);
    return nullptr;
}

// The kernel variants this build's architecture has, as a sentence's list.
std::string isas_here() {
#if defined(__aarch64__)
    return "scalar or neon";
#elif defined(__x86_64__)
    return "scalar, avx2 or avx512";
#else
    return "scalar";
#endif
}

// `value` (of the flag or variable `what`) names a kernel variant this architecture has: an
// unknown name is a typo, another architecture's ISA could never run here.
void check_isa(const std::string& what, const std::string& value) {
    const auto isa = ck::isa_from_name(value);
    if (!isa) throw ck::usage_error(what + ": expected " + isas_here());
    if (!ck::isa_of_this_architecture(*isa))
        throw ck::usage_error(what + ": this build's CPU architecture has no " + value +
                              " kernels (expected " + isas_here() + ")");
}

}  // namespace

// Finds where the global options in front of the command end (each option's value, if it takes
// one, is the next token unless given as --name=VALUE), and has Boost.Program_options parse
// them, so that a missing value or a bad one is the same usage error as after the command.
Split split_at_command(const std::vector<std::string>& args) {
    Common ignored;
    const po::options_description globals = global_options(ignored);
    std::size_t end = 0;
    while (end < args.size()) {
        const po::option_description* option = global_option(args[end], globals);
        if (!option) break;
        const bool inline_value = args[end].find('=') != std::string::npos;
        ++end;
        if (!inline_value && option->semantic()->max_tokens() > 0 && end < args.size()) ++end;
    }
    Split split{{args.begin(), args.begin() + static_cast<std::ptrdiff_t>(end)},
                {args.begin() + static_cast<std::ptrdiff_t>(end), args.end()}};
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(split.globals)
                      .options(globals)
                      .style(po::command_line_style::default_style &
                             ~po::command_line_style::allow_guessing)
                      .positional({})
                      .run(),
                  vm);
    } catch (const po::error& e) {
        throw ck::usage_error(e.what());
    }
    return split;
}

// --max-memory, else CKHOST_MAX_MEMORY, in bytes; 0 when neither is given (the default).
std::uint64_t max_memory(const Common& c) {
    const char* env = std::getenv("CKHOST_MAX_MEMORY");
    const std::string text = !c.max_memory.empty() ? c.max_memory : env ? env : "";
    if (text.empty()) return 0;
    if (auto bytes = ck::parse_byte_size(text, ck::BareUnit::binary)) return *bytes;
    throw ck::usage_error((c.max_memory.empty() ? "CKHOST_MAX_MEMORY=" : "--max-memory ") + text +
                          ": expected a size of at least 1 byte, such as " +
                          ck::byte_size_forms(ck::BareUnit::binary));
}

// Whether outputs are fsync'ed before their rename: not with --no-sync or CKHOST_NO_SYNC=1.
bool sync_outputs(const Common& c) {
    if (c.no_sync) return false;
    const char* env = std::getenv("CKHOST_NO_SYNC");
    const std::string text = env ? env : "";
    if (text.empty() || text == "0") return true;
    if (text == "1") return false;
    throw ck::usage_error("CKHOST_NO_SYNC=" + text + ": expected 1 (skip fsync) or 0");
}

// The global options that reach plugins through the environment (read once, when first used):
// --isa sets CKHOST_ISA, --threads sets CKHOST_THREADS. Both must be set before any work.
void apply_globals(const Common& c) {
    // A directory that is not there is a typo, not an empty search path entry: found silently,
    // it would leave the built-in plugins in charge without a word.
    for (const auto& dir : c.plugin_dirs) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec))
            throw ck::usage_error("--plugin-dir " + ck::support::shell_quote(dir) + ": " +
                                  (fs::exists(dir, ec) ? "not a directory" : "no such directory"));
    }
    // The kernels read CKHOST_ISA themselves and would ignore a value they do not know.
    if (const char* env = std::getenv("CKHOST_ISA"); c.isa.empty() && env && *env)
        check_isa(std::string("CKHOST_ISA=") + env, env);
    if (!c.isa.empty()) {
        check_isa("--isa " + c.isa, c.isa);
        ::setenv("CKHOST_ISA", c.isa.c_str(), 1);
    }
    if (c.threads != -1) {
        if (c.threads < 1 || c.threads > ck::max_threads)
            throw ck::usage_error("--threads " + std::to_string(c.threads) +
                                  ": expected a number from 1 to " +
                                  std::to_string(ck::max_threads));
        ::setenv("CKHOST_THREADS", std::to_string(c.threads).c_str(), 1);
    } else if (const char* env = std::getenv("CKHOST_THREADS");
               env && *env && !ck::parse_thread_count(env)) {
        throw ck::usage_error(std::string("CKHOST_THREADS=") + env +
                              ": expected a number from 1 to " + std::to_string(ck::max_threads));
    }
    max_memory(c);    // refuse a malformed budget whatever the command
    sync_outputs(c);  // and a malformed CKHOST_NO_SYNC
}

std::vector<fs::path> to_paths(const std::vector<std::string>& dirs) {
    return {dirs.begin(), dirs.end()};
}

}  // namespace ckhost::cli
