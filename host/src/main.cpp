// ckhost: the command line (cli.md). A thin driver: parse, find plugins, run, map errors to
// exit codes.
#include <boost/program_options.hpp>

#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "batch.hpp"
#include "batch_report.hpp"
#include "ck/cpu.hpp"
#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "ck/support/shell_quote.hpp"
#include "completion.hpp"
#include "conversion_error.hpp"
#include "exit_codes.hpp"
#include "inspect.hpp"
#include "json_output.hpp"
#include "memory_budget.hpp"
#include "pipeline.hpp"
#include "plugins_command.hpp"
#include "recipe.hpp"
#include "stdin_spool.hpp"
#include "suggest.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

using ckhost::ok;
using ckhost::usage;

const char* main_usage =
    "usage: ckhost --pipeline READER[:TRANSFORM...]:WRITER -i INPUT -o OUTPUT [options]\n"
    "       ckhost convert --pipeline PIPELINE INPUT OUTPUT [options]\n"
    "       ckhost inspect FILE... [--json] [--tensors] [--kv KEY]...\n"
    "       ckhost verify FILE... [--data] [--json]\n"
    "       ckhost plugins [--json]\n"
    "       ckhost batch JOBS [--jobs N] [--json] [--force] [--shard K/N|auto]\n"
    "       ckhost batch-report DIR [--resubmit FILE] [--json]\n"
    "       ckhost completion bash|zsh\n"
    "       ckhost help [COMMAND]     (or ckhost COMMAND --help: that command's options)\n"
    "\n"
    "Converts model weight files between formats, one tensor at a time.\n"
    "\n"
    "examples:\n"
    "  ckhost --pipeline gguf:gguf -i model.gguf -o copy.gguf\n"
    "  ckhost convert --pipeline gguf:gguf model.gguf out/ --dry-run\n"
    "  ckhost inspect model.gguf --tensors\n"
    "  ckhost inspect model.gguf --kv tokenizer.ggml.tokens\n"
    "  ckhost plugins --json\n"
    "  ckhost batch jobs.txt --jobs 2      (jobs.txt: one 'PIPELINE INPUT OUTPUT' per line)\n"
    "\n"
    "Global options, before or after the command: --plugin-dir DIR (repeatable), --isa X,\n"
    "--threads N, --max-memory SIZE, --no-sync, --quiet/-q, --json (e.g. ckhost --plugin-dir\n"
    "build plugins, ckhost --json inspect F).\n"
    "-i - reads standard input; -o - writes standard output (writers that stream: gguf,\n"
    "safetensors).\n"
    "Stage options go in brackets, so quote the pipeline: "
    "'gguf:repack[to=nf4,only=blk.*]:safetensors'.\n"
    "Exit codes: 0 success, 1 input or conversion failed, 2 usage error, 3 plugin could not be\n"
    "loaded, 130 interrupted.\n";

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
po::options_description global_options(Common& c) {
    po::options_description d("global options (before or after the command)");
    d.add_options()("plugin-dir", po::value(&c.plugin_dirs)->composing(),
                    "search DIR for plugins first (repeatable)")(
        "isa", po::value(&c.isa),
        "force a lower kernel variant: scalar|avx2|avx512 (sets CKHOST_ISA)")(
        "threads", po::value(&c.threads),
        "worker threads (default: CKHOST_THREADS, else the CPUs this process may use)")(
        "max-memory", po::value(&c.max_memory),
        "bytes of tensors computed ahead of the writer, e.g. 2G (default: CKHOST_MAX_MEMORY, "
        "else a quarter of RAM)")(
        "no-sync", po::bool_switch(&c.no_sync),
        "do not fsync outputs before renaming them into place (scratch work; default: "
        "CKHOST_NO_SYNC=1, else sync)")("quiet,q", po::bool_switch(&c.quiet),
                                        "no progress, no warnings on stderr")(
        "json", po::bool_switch(&c.json), "machine-readable output on stdout");
    return d;
}

po::options_description common_options(Common& c) {
    po::options_description d = global_options(c);
    d.add_options()("help,h", po::bool_switch(&c.help), "show this help");
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
    } catch (const po::error& e) {
        throw ck::usage_error(e.what());
    }
    return vm;
}

// Parses a command's arguments (`options`, and `arguments`: the positional ones, which the usage
// line names and the option list leaves out); with --help prints `usage` (which ends in a blank
// line) and the options instead, and returns true: the command has nothing more to do.
bool parse_or_help(const std::vector<std::string>& args, const po::options_description& options,
                   const po::options_description& arguments,
                   const po::positional_options_description& positional, const Common& c,
                   std::string_view usage) {
    po::options_description all;
    all.add(options).add(arguments);
    parse(args, all, positional);
    if (!c.help) return false;
    std::cout << usage << options;
    return true;
}

// The command line split at the command: the global options in front of it, as typed, and
// everything from the first other token on (the command name, or the convert options of the
// form without one).
struct Split {
    std::vector<std::string> globals;
    std::vector<std::string> rest;
};

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
    if (auto bytes = ckhost::parse_byte_size(text)) return *bytes;
    throw ck::usage_error((c.max_memory.empty() ? "CKHOST_MAX_MEMORY=" : "--max-memory ") + text +
                          ": expected a size such as 512M, 2G or 1.5T (at least 1 byte)");
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
    if (const char* env = std::getenv("CKHOST_ISA");
        c.isa.empty() && env && *env && !ck::isa_from_name(env))
        throw ck::usage_error(std::string("CKHOST_ISA=") + env +
                              ": expected scalar, avx2 or avx512");
    if (!c.isa.empty()) {
        if (!ck::isa_from_name(c.isa))
            throw ck::usage_error("--isa " + c.isa + ": expected scalar, avx2 or avx512");
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

// Set when this process runs one job of a `ckhost batch` (the batch sets CKHOST_BATCH_JOB).
bool batch_job = false;

extern "C" void on_interrupt(int) {
    ck::request_interrupt();
    // A second Ctrl-C ends the process at once. Not in a batch job: the terminal's Ctrl-C and
    // the batch's forwarded signal both arrive, and the batch decides when to kill.
    if (batch_job) return;
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

extern "C" void on_batch_interrupt(int) {
    ckhost::batch_signal_received();
}

// Writers that make one file per tensor hold every output open until the atomic commit; a
// model with more tensors than the default soft limit of 1024 descriptors must not fail.
void raise_open_file_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

// With `options_out`, each command only lists its options (for `ckhost completion`).
int convert_command(const std::vector<std::string>& args,
                    std::vector<std::string>* options_out = nullptr) {
    Common c;
    std::string pipeline, input, output;
    bool dry_run = false, force = false, update = false;
    po::options_description d("convert options");
    d.add_options()("pipeline,p", po::value(&pipeline),
                    "READER[:TRANSFORM...]:WRITER, stage options in brackets")(
        "input,i", po::value(&input), "input file, or - for standard input")(
        "output,o", po::value(&output),
        "output file or directory (DIR/ for writers that make several files), or - for "
        "standard output (writers that stream)")("dry-run,n", po::bool_switch(&dry_run),
                                                 "print the plan and write nothing")(
        "force,f", po::bool_switch(&force), "overwrite existing outputs")(
        "update,u", po::bool_switch(&update),
        "do nothing when the outputs' recipe record (OUTPUT.ckhost.json) says this pipeline made "
        "them from this input with this ckhost and plugins; else write them and the record");
    d.add(common_options(c));
    if (options_out) {
        *options_out = option_names(d);
        return ok;
    }
    po::positional_options_description pos;
    pos.add("input", 1).add("output", 1);
    if (parse_or_help(
            args, d, {}, pos, c,
            "usage: ckhost convert --pipeline PIPELINE INPUT OUTPUT [options]\n"
            "       ckhost --pipeline PIPELINE -i INPUT -o OUTPUT [options]\n\n"
            "Converts INPUT through the pipeline's stages (READER[:TRANSFORM...]:WRITER) into\n"
            "OUTPUT, one tensor at a time. The whole plan is checked before anything is\n"
            "written, and outputs replace their targets only when everything succeeded.\n"
            "Stage options go in brackets; quote the pipeline for the shell. 'ckhost plugins'\n"
            "lists the stages and their options.\n\n"
            "examples:\n"
            "  ckhost convert --pipeline gguf:headpack:bump model.gguf out/\n"
            "  ckhost --pipeline 'gguf:repack[to=nf4]:safetensors' -i m.gguf -o m.safetensors\n"
            "  ckhost --pipeline gguf:gguf -i model.gguf -o copy.gguf --dry-run\n\n"))
        return ok;
    if (pipeline.empty()) throw ck::usage_error("missing --pipeline (e.g. --pipeline gguf:gguf)");
    if (input.empty()) throw ck::usage_error("missing input (-i FILE or the first argument)");
    if (output.empty()) throw ck::usage_error("missing output (-o PATH or the second argument)");
    // '-' is a standard stream (./- names a file called '-'). Standard input is spooled to a
    // nameless temporary file (stdin_spool.hpp); standard output takes a writer that streams.
    const bool from_stdin = input == "-";
    const bool to_stdout = output == "-";
    if (from_stdin && update)
        throw ck::usage_error(
            "-i - with --update: standard input has no identity to "
            "compare the outputs with");
    if (to_stdout && update)
        throw ck::usage_error("-o - with --update: standard output is not a file to compare");
    if (to_stdout && !dry_run) {
        if (c.json)
            throw ck::usage_error(
                "-o - with --json: both would go to standard output; write the model to a file");
        if (::isatty(STDOUT_FILENO))
            throw ck::usage_error(
                "-o -: standard output is a terminal; redirect it to a file or a pipe");
    }
    apply_globals(c);
    const std::uint64_t budget = max_memory(c);

    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    ckhost::Pipeline p(registry, pipeline);
    // Refused before standard input is read: spooling gigabytes first would be unkind.
    if (to_stdout && !p.writer_streams()) {
        std::vector<std::string> streaming;
        for (const auto& name : registry.names_with(CK_STAGE_WRITER))
            if (registry.get(name).descriptor->flags & CK_PLUGIN_FLAG_STREAMS)
                streaming.push_back(name);
        throw ck::usage_error("-o -: the writer '" + p.writer_name() +
                              "' cannot write to standard output (it patches what it wrote, or "
                              "writes several files); writers that can: " +
                              (streaming.empty() ? "none found" : ckhost::join(streaming)));
    }
    ckhost::ConvertSettings settings;
    static_cast<ckhost::Conversion&>(settings) = {pipeline, input, output};
    settings.sync = sync_outputs(c);
    if (!c.quiet)
        settings.say = [](const std::string& line) { std::cerr << "ckhost: " << line << "\n"; };
    settings.dry_run = dry_run;
    settings.force = force;
    settings.update = update;
    settings.progress = !c.quiet && !c.json && ::isatty(STDERR_FILENO);
    settings.checksums = c.json;
    settings.max_memory = budget;
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    // A reader that goes away (`| head`) is a write error naming standard output, not a silent
    // death by SIGPIPE.
    if (to_stdout) std::signal(SIGPIPE, SIG_IGN);
    std::optional<ckhost::StdinSpool> spool;
    if (from_stdin) settings.input_file = spool.emplace().path();
    ckhost::ConvertResult result;
    try {
        result = p.run(settings);
    } catch (const ckhost::ConversionError& e) {
        // The warnings before a failure, in the order given, then (in main) the error.
        if (!c.quiet) {
            for (const auto& w : registry.warnings()) std::cerr << "warning: " << w << "\n";
            for (const auto& w : e.warnings()) std::cerr << "warning: " << w << "\n";
        }
        throw;
    }
    if (!c.quiet)
        for (const auto& w : registry.warnings()) std::cerr << "warning: " << w << "\n";
    if (!c.quiet)
        for (const auto& w : result.warnings) std::cerr << "warning: " << w << "\n";
    if (!c.quiet && !c.json)
        for (const auto& n : result.notes) std::cerr << n << "\n";
    if (dry_run && !c.json) p.print_plan(std::cout);
    if (result.report.value("up_to_date", false) && !c.quiet && !c.json)
        std::cerr << "ckhost: up to date (" << ckhost::recipe_path(p.outputs()).string()
                  << ": same pipeline, input, ckhost and plugins): nothing to do\n";
    if (c.json) {
        nlohmann::json doc = ckhost::json_document("convert");
        doc.update(result.report);
        ckhost::print_json(std::cout, doc);
    }
    return ok;
}

// The files of `inspect` or `verify`, one after the other. One file is one document (--json)
// whose failure is main()'s error document; several are {"files": [...]}, one document each
// (an error document for a file that failed), and the exit status is the first failure's.
int inspect_files(const std::vector<std::string>& files, bool as_json, const char* command,
                  const std::function<int(const std::string&, std::ostream&)>& run) {
    if (files.size() == 1) return run(files.front(), std::cout);
    int status = ok;
    nlohmann::json docs = nlohmann::json::array();
    for (std::size_t i = 0; i < files.size(); ++i) {
        std::ostringstream text;
        int code = ok;
        try {
            code = run(files[i], text);
            if (as_json) docs.push_back(nlohmann::json::parse(text.str()));
        } catch (const ck::Error& e) {
            if (e.kind() == ck::ErrorKind::interrupt) throw;
            const ck::Error shown = e.file().empty() ? e.with_file(files[i]) : e;
            std::cerr << "ckhost: error: " << shown.what() << "\n";
            if (as_json) docs.push_back(ckhost::error_document(command, shown));
            code = ckhost::exit_code_for(e.kind());
        }
        // inspect's reports are separated by a blank line; verify's are one line each.
        const bool blank = i > 0 && !text.str().empty() && std::string_view(command) == "inspect";
        if (!as_json) std::cout << (blank ? "\n" : "") << text.str();
        if (status == ok) status = code;
    }
    if (as_json) {
        nlohmann::json doc = ckhost::json_document(command, status == ok);
        doc["files"] = docs;
        ckhost::print_json(std::cout, doc);
    }
    return status;
}

int inspect_command(const std::vector<std::string>& args, bool verify,
                    std::vector<std::string>* options_out = nullptr) {
    Common c;
    ckhost::InspectSettings settings;
    std::vector<std::string> files;
    po::options_description d(verify ? "verify options" : "inspect options");
    po::options_description arguments;
    arguments.add_options()("file", po::value(&files));
    bool data = false;
    if (!verify)
        d.add_options()("tensors,t", po::bool_switch(&settings.tensors), "list every tensor")(
            "kv", po::value(&settings.keys)->composing(),
            "print one metadata value in full (repeatable)");
    else
        d.add_options()("data", po::bool_switch(&data),
                        "also read every tensor's data: NaN or infinite floats and block scales "
                        "(llama.cpp's --check-tensors)");
    d.add(common_options(c));
    if (options_out) {
        *options_out = option_names(d);
        return ok;
    }
    po::positional_options_description pos;
    pos.add("file", -1);
    if (parse_or_help(
            args, d, arguments, pos, c,
            (verify ? "usage: ckhost verify FILE... [--data] [--json]\n\nRe-checks each "
                      "file's integrity; --data also checks every value. Exit 0 only\n"
                      "when every file is sound.\n\n"
                      "examples:\n"
                      "  ckhost verify out/weights.bump\n"
                      "  ckhost verify --data *.gguf\n\n"
                    : "usage: ckhost inspect FILE... [--json] [--tensors] [--kv KEY]...\n\n"
                      "Shows each file's header, metadata, tensor table and bytes per "
                      "dtype; --kv prints\nthe named values in full.\n\n"
                      "examples:\n"
                      "  ckhost inspect model.gguf --tensors\n"
                      "  ckhost inspect *.gguf --json\n"
                      "  ckhost inspect model.gguf --kv general.name --kv "
                      "tokenizer.ggml.tokens\n\n")))
        return ok;
    if (files.empty()) throw ck::usage_error("missing FILE");
    for (const auto& file : files)
        if (file == "-")
            throw ck::usage_error(std::string(verify ? "verify" : "inspect") +
                                  " -: standard input is not supported here; give a file path "
                                  "(./- for a file named '-')");
    apply_globals(c);
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    settings.json = c.json;
    return inspect_files(files, c.json, verify ? "verify" : "inspect",
                         [&](const std::string& file, std::ostream& out) {
                             if (verify)
                                 return ckhost::run_verify(registry, file, c.json, data, out,
                                                           std::cerr);
                             settings.file = file;
                             // Values alone do not say whose they are: with several files each gets
                             // its name.
                             if (!c.json && !settings.keys.empty() && files.size() > 1)
                                 out << file << ":\n";
                             return ckhost::run_inspect(registry, settings, out, std::cerr);
                         });
}

int plugins_command(const std::vector<std::string>& args,
                    std::vector<std::string>* options_out = nullptr) {
    Common c;
    po::options_description d("plugins options");
    d.add(common_options(c));
    if (options_out) {
        *options_out = option_names(d);
        return ok;
    }
    if (parse_or_help(args, d, {}, {}, c,
                      "usage: ckhost plugins [--json]\n\nLists every plugin found, loaded or "
                      "skipped: kinds, version, options\nand their choices, the kernel variant "
                      "each selected.\n\n"
                      "examples:\n"
                      "  ckhost plugins\n"
                      "  ckhost --plugin-dir build plugins --json\n\n"))
        return ok;
    apply_globals(c);
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    return ckhost::run_plugins(registry, c.json, std::cout, std::cerr);
}

int batch_command(const std::vector<std::string>& args,
                  std::vector<std::string>* options_out = nullptr) {
    Common c;
    ckhost::BatchSettings settings;
    po::options_description d("batch options");
    po::options_description arguments;
    arguments.add_options()("jobs-file", po::value(&settings.jobs_file));
    std::string shard;
    d.add_options()("jobs,j", po::value(&settings.parallel)->default_value(1),
                    "run N conversions at once")(
        "force,f", po::bool_switch(&settings.force),
        "rerun jobs whose outputs are up to date, overwriting them")(
        "shard", po::value(&shard),
        "run slice K of N of the jobs (K from 0): K/N, auto (the scheduler's array task "
        "variables) or auto/N")("report-dir", po::value(&settings.report_dir),
                                "also write the --json report to DIR/shard-K.json, atomically "
                                "(for ckhost batch-report DIR)");
    d.add(common_options(c));
    if (options_out) {
        *options_out = option_names(d);
        return ok;
    }
    po::positional_options_description pos;
    pos.add("jobs-file", 1);
    if (parse_or_help(
            args, d, arguments, pos, c,
            "usage: ckhost batch JOBS [--jobs N] [--json] [--force] [--shard K/N|auto]\n"
            "                         [--report-dir DIR]\n\n"
            "Runs many conversions, N at a time, each in its own process. JOBS is a text file\n"
            "(or - for stdin) with one 'PIPELINE INPUT OUTPUT' job per line, '#' comments and\n"
            "blank lines ignored, or a JSON array of {\"pipeline\", \"input\", \"output\"}.\n"
            "A failing job does not stop the others; exit 1 when any failed. A job whose\n"
            "outputs its recipe record (OUTPUT.ckhost.json) says were made by the same\n"
            "pipeline from the same input with the same ckhost and plugins, unchanged since,\n"
            "is skipped unless --force; any other is converted, saying why. Ctrl-C stops\n"
            "every running job cleanly (exit 130): run the batch again to finish it.\n"
            "--shard K/N runs the K-th of N slices (every job writing one file in one slice,\n"
            "balanced by input size); --shard auto takes K and N from a job array (Slurm,\n"
            "SGE; Kubernetes and PBS with auto/N). Merge the shards' --report-dir reports\n"
            "with 'ckhost batch-report DIR'.\n\n"
            "examples:\n"
            "  ckhost batch jobs.txt --jobs 2\n"
            "  ckhost batch jobs.txt --shard auto --report-dir reports/ --jobs 4\n"
            "  printf 'gguf:headpack:bump a.gguf out/a/\\n' | ckhost batch - --json\n\n"))
        return ok;
    if (settings.jobs_file.empty())
        throw ck::usage_error("missing JOBS (a jobs file, or - for stdin)");
    if (settings.parallel < 1 || settings.parallel > 256)
        throw ck::usage_error("--jobs " + std::to_string(settings.parallel) +
                              ": expected a number from 1 to 256");
    if (!shard.empty())
        settings.shard =
            ckhost::parse_shard(shard, [](const char* name) { return std::getenv(name); });
    if (!settings.report_dir.empty() && !settings.shard)
        settings.shard = ckhost::ShardSpec{0, 1, "the whole list"};
    apply_globals(c);
    settings.json = c.json;
    settings.quiet = c.quiet;
    settings.plugin_dirs = c.plugin_dirs;
    settings.isa = c.isa;
    settings.threads = ck::thread_count();
    settings.sync = sync_outputs(c);
    settings.max_memory = max_memory(c);
    if (settings.max_memory == 0) settings.max_memory = ckhost::default_max_memory();
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    if (!c.quiet)
        for (const auto& w : registry.warnings()) std::cerr << "warning: " << w << "\n";
    std::signal(SIGINT, on_batch_interrupt);
    std::signal(SIGTERM, on_batch_interrupt);
    return ckhost::run_batch(registry, settings, std::cout, std::cerr);
}

int batch_report_command(const std::vector<std::string>& args,
                         std::vector<std::string>* options_out = nullptr) {
    Common c;
    ckhost::BatchReportSettings settings;
    po::options_description d("batch-report options");
    po::options_description arguments;
    arguments.add_options()("report-dir", po::value(&settings.report_dir));
    d.add_options()("jobs-file", po::value(&settings.jobs_file),
                    "the shards' jobs list (default: the one their reports name)")(
        "resubmit", po::value(&settings.resubmit),
        "write the jobs still to do (failed, not run) to FILE, in the jobs-file format");
    d.add(common_options(c));
    if (options_out) {
        *options_out = option_names(d);
        return ok;
    }
    po::positional_options_description pos;
    pos.add("report-dir", 1);
    if (parse_or_help(
            args, d, arguments, pos, c,
            "usage: ckhost batch-report DIR [--jobs-file JOBS] [--resubmit FILE] [--json]\n\n"
            "Merges the reports that 'ckhost batch --shard ... --report-dir DIR' wrote\n"
            "(DIR/shard-K.json): totals, the failed jobs with their errors, and the jobs\n"
            "that never ran (a shard that died wrote no report, or was interrupted).\n"
            "Exit 0 when every job is done (ok or up to date), 1 when any failed, 75 when\n"
            "none failed but some never ran (run them again: --resubmit).\n\n"
            "examples:\n"
            "  ckhost batch-report reports/\n"
            "  ckhost batch-report reports/ --resubmit todo.txt --json\n\n"))
        return ok;
    if (settings.report_dir.empty())
        throw ck::usage_error("missing DIR (the shards' --report-dir)");
    apply_globals(c);
    settings.json = c.json;
    settings.sync = sync_outputs(c);
    return ckhost::run_batch_report(settings, std::cout, std::cerr);
}

int completion_command(const std::vector<std::string>& args);

// The command names, and what each takes after its name.
using CommandRunner = std::function<int(const std::vector<std::string>&)>;
const std::vector<std::pair<std::string, CommandRunner>>& command_table() {
    static const std::vector<std::pair<std::string, CommandRunner>> table = {
        {"convert", [](const auto& a) { return convert_command(a); }},
        {"inspect", [](const auto& a) { return inspect_command(a, false); }},
        {"verify", [](const auto& a) { return inspect_command(a, true); }},
        {"plugins", [](const auto& a) { return plugins_command(a); }},
        {"batch", [](const auto& a) { return batch_command(a); }},
        {"batch-report", [](const auto& a) { return batch_report_command(a); }},
        {"completion", [](const auto& a) { return completion_command(a); }},
    };
    return table;
}

std::vector<std::string> command_names() {
    std::vector<std::string> names;
    for (const auto& [name, run] : command_table()) names.push_back(name);
    names.push_back("help");
    return names;
}

// The command this run is for, named in --json error documents ("convert" for the form
// without a command name).
std::string current_command = "convert";

int completion_command(const std::vector<std::string>& args) {
    Common c;
    std::string shell;
    po::options_description d("completion options");
    po::options_description arguments;
    arguments.add_options()("shell", po::value(&shell));
    d.add(common_options(c));
    po::positional_options_description pos;
    pos.add("shell", 1);
    if (parse_or_help(
            args, d, arguments, pos, c,
            "usage: ckhost completion bash|zsh\n\nPrints a completion script for the "
            "shell: commands, options, and the stages\nand stage options of the plugins "
            "found now (installed ones: share/bash-completion,\nshare/zsh/site-functions).\n\n"
            "examples:\n"
            "  source <(ckhost completion bash)\n"
            "  ckhost completion zsh > ~/.zfunc/_ckhost\n\n"))
        return ok;
    if (shell != "bash" && shell != "zsh")
        throw ck::usage_error(shell.empty() ? "missing SHELL (bash or zsh)"
                                            : "completion " + shell + ": expected bash or zsh");
    apply_globals(c);
    std::vector<ckhost::CompletionCommand> commands;
    for (const auto& [name, run] : command_table()) {
        ckhost::CompletionCommand command{name, {}};
        if (name == "convert") convert_command({}, &command.options);
        if (name == "inspect") inspect_command({}, false, &command.options);
        if (name == "verify") inspect_command({}, true, &command.options);
        if (name == "plugins") plugins_command({}, &command.options);
        if (name == "batch") batch_command({}, &command.options);
        if (name == "batch-report") batch_report_command({}, &command.options);
        commands.push_back(std::move(command));
    }
    commands.push_back({"help", {}});
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    ckhost::write_completion(shell, commands, registry, std::cout);
    return ok;
}

int dispatch(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << main_usage;
        return usage;
    }
    // Global options may come before the command: `ckhost --plugin-dir d plugins`. They are
    // handed to the command in front of its own arguments, so `--plugin-dir` before and after
    // the command adds directories in the order given.
    const Split split = split_at_command({argv + 1, argv + argc});
    const std::string first = split.rest.empty() ? std::string() : split.rest.front();
    const auto& table = command_table();
    const auto find = [&](const std::string& name) {
        return std::find_if(table.begin(), table.end(),
                            [&](const auto& entry) { return entry.first == name; });
    };
    if (first == "help" || first == "--help" || first == "-h") {
        // `ckhost help convert`: that command's own help, as `ckhost convert --help`.
        if (first == "help" && split.rest.size() > 1) {
            const std::string& topic = split.rest[1];
            const auto command = find(topic);
            if (command == table.end())
                throw ck::usage_error("help " + topic + ": unknown command" +
                                      ckhost::did_you_mean(topic, command_names()) +
                                      " (commands: " + ckhost::join(command_names()) + ")");
            current_command = topic;
            return command->second({"--help"});
        }
        std::cout << main_usage;
        return ok;
    }
    if (first == "--version") {
        std::cout << "ckhost " << CKHOST_VERSION << "\n";
        return ok;
    }
    if (const auto command = find(first); command != table.end()) {
        current_command = first;
        std::vector<std::string> args = split.globals;
        args.insert(args.end(), split.rest.begin() + 1, split.rest.end());
        return command->second(args);
    }
    // No command: the convert options straight away (`ckhost --pipeline P -i IN -o OUT`).
    if (first.empty() || first[0] == '-') return convert_command({argv + 1, argv + argc});
    throw ck::usage_error("unknown command '" + first + "'" +
                          ckhost::did_you_mean(first, command_names()) +
                          " (commands: " + ckhost::join(command_names()) + ")");
}

// Whether --json was given anywhere: a usage error found before the command parsed its
// options still owes a script its error document.
bool json_requested(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") break;
        if (arg == "--json") return true;
    }
    return false;
}

// The error on stderr, and with --json as a document on stdout; the exit code for it.
int report_error(const ck::Error& e, bool as_json) {
    std::cerr << "ckhost: error: " << e.what() << "\n";
    // A failed conversion may know a pipeline that plans where this one failed (and the
    // warnings that explain the failure, already printed by convert_command).
    const auto* failed = dynamic_cast<const ckhost::ConversionError*>(&e);
    if (failed && !failed->suggestion().empty())
        std::cerr << "ckhost: suggestion: --pipeline "
                  << ck::support::shell_quote(failed->suggestion())
                  << " (it plans on the same input and output)\n";
    if (as_json) {
        nlohmann::json doc = ckhost::error_document(current_command, e);
        if (failed) {
            doc["error"]["warnings"] = failed->warnings();
            doc["error"]["suggestion"] = failed->suggestion().empty()
                                             ? nlohmann::json(nullptr)
                                             : nlohmann::json(failed->suggestion());
        }
        ckhost::print_json(std::cout, doc);
    }
    return ckhost::exit_code_for(e.kind());
}

}  // namespace

int main(int argc, char** argv) {
    batch_job = std::getenv("CKHOST_BATCH_JOB") != nullptr;
    raise_open_file_limit();
    // Past `ulimit -f` the kernel would kill us with SIGXFSZ, leaving the temporary file;
    // ignored, the write fails with EFBIG and the normal failure path cleans up.
    std::signal(SIGXFSZ, SIG_IGN);
    const bool as_json = json_requested(argc, argv);
    try {
        return dispatch(argc, argv);
    } catch (const ck::Error& e) {
        return report_error(e, as_json);
    } catch (const std::exception& e) {
        return report_error(ck::Error(e.what()), as_json);
    }
}
