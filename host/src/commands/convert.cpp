// `ckhost convert` and the form without a command name: one pipeline, one input, one output.
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "cli/command_line.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_output.hpp"
#include "cli/process.hpp"
#include "cli/suggest.hpp"
#include "commands/commands.hpp"
#include "commands/conversion_command.hpp"
#include "io/stdin_spool.hpp"
#include "pipeline/conversion_error.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/recipe.hpp"
#include "pipeline/run_summary.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

po::options_description convert_options(ConvertArgs& a) {
    po::options_description d("convert options");
    d.add_options()("pipeline,p", po::value(&a.pipeline),
                    "READER[:TRANSFORM...]:WRITER, stage options in brackets")(
        "input,i", po::value(&a.input), "input file, or - for standard input")(
        "output,o", po::value(&a.output),
        "output file or directory (DIR/ for writers that make several files), or - for "
        "standard output (writers that stream)");
    add_run_options(d, a);
    return d;
}

constexpr const char* convert_usage =
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
    "  ckhost --pipeline gguf:gguf -i model.gguf -o copy.gguf --dry-run\n\n";

// The usage errors that need no plugin: missing arguments, and standard streams used where
// they cannot be. '-' is a standard stream (./- names a file called '-'); standard input is
// spooled to a nameless temporary file (stdin_spool.hpp), standard output takes a writer that
// streams.
void check_arguments(const ConvertArgs& a, const Common& c) {
    if (a.pipeline.empty()) throw ck::usage_error("missing --pipeline (e.g. --pipeline gguf:gguf)");
    if (a.input.empty()) throw ck::usage_error("missing input (-i FILE or the first argument)");
    if (a.output.empty()) throw ck::usage_error("missing output (-o PATH or the second argument)");
    if (a.input == "-" && a.update)
        throw ck::usage_error(
            "-i - with --update: standard input has no identity to compare the outputs with");
    if (a.output == "-" && a.update)
        throw ck::usage_error("-o - with --update: standard output is not a file to compare");
    if (a.output == "-" && !a.dry_run) {
        if (c.json)
            throw ck::usage_error(
                "-o - with --json: both would go to standard output; write the model to a file");
        if (::isatty(STDOUT_FILENO))
            throw ck::usage_error(
                "-o -: standard output is a terminal; redirect it to a file or a pipe");
    }
}

// Refused before standard input is read: spooling gigabytes first would be unkind.
void check_streaming_writer(PluginRegistry& registry, const Pipeline& p) {
    if (p.writer_streams()) return;
    std::vector<std::string> streaming;
    for (const auto& name : registry.names_with(CK_STAGE_WRITER))
        if (registry.get(name).descriptor->flags & CK_PLUGIN_FLAG_STREAMS)
            streaming.push_back(name);
    throw ck::usage_error("-o -: the writer '" + p.writer_name() +
                          "' cannot write to standard output (it patches what it wrote, or "
                          "writes several files); writers that can: " +
                          (streaming.empty() ? "none found" : ckhost::join(streaming)));
}

ConvertSettings settings_for(const ConvertArgs& a, const Common& c) {
    ConvertSettings settings;
    static_cast<Conversion&>(settings) = {a.pipeline, a.input, a.output};
    settings.sync = sync_outputs(c);
    if (!c.quiet)
        settings.say = [](const std::string& line) { std::cerr << "ckhost: " << line << "\n"; };
    settings.dry_run = a.dry_run;
    settings.force = a.force;
    settings.update = a.update;
    settings.progress = !c.quiet && !c.json && ::isatty(STDERR_FILENO);
    settings.checksums = c.json;
    settings.max_memory = max_memory(c);
    return settings;
}

void print_warnings(const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
}

// What a finished conversion says: warnings and notes on stderr, the plan for --dry-run, the
// report for --json.
void print_result(const ConvertResult& result, const PluginRegistry& registry, const Pipeline& p,
                  const ConvertArgs& a, const Common& c) {
    if (!c.quiet) {
        print_warnings(registry.warnings());
        print_warnings(result.warnings);
    }
    if (!c.quiet && !c.json)
        for (const auto& n : result.notes) std::cerr << n << "\n";
    if (a.dry_run && !c.json) p.print_plan(std::cout);
    const bool up_to_date = result.report.value("up_to_date", false);
    if (up_to_date && !c.quiet && !c.json)
        std::cerr << "ckhost: up to date (" << recipe_path(p.outputs()).string()
                  << ": same pipeline, input, files its stages read, ckhost and plugins): "
                     "nothing to do\n";
    // What was written, for people: --json's report says the same to scripts.
    if (!a.dry_run && !up_to_date && !c.quiet && !c.json)
        for (const std::string& line : success_summary(result.report)) std::cerr << line << "\n";
    if (c.json) {
        nlohmann::json doc = json_document("convert");
        doc.update(result.report);
        print_json(std::cout, doc);
    }
}

}  // namespace

Positionals positional_strings(const std::vector<Argument>& arguments) {
    Positionals positionals;
    for (const Argument& argument : arguments) {
        positionals.arguments.add_options()(argument.name, po::value(argument.value));
        positionals.order.add(argument.name, 1);
    }
    return positionals;
}

void require_arguments(const std::vector<Argument>& arguments, std::size_t required,
                       std::string_view synopsis) {
    for (std::size_t i = 0; i < required && i < arguments.size(); ++i)
        if (arguments[i].value->empty())
            throw ck::usage_error("missing " + std::string(arguments[i].name) + " (usage: ckhost " +
                                  std::string(synopsis) + ")");
}

void StageFlagValues::add_to(po::options_description& options) {
    for (const StageFlag& f : flags_) {
        const std::string help =
            std::string(f.help) + " (" + f.option + "=" + (f.value_name ? f.value_name : "1") + ")";
        if (f.value_name)
            options.add_options()(f.flag, po::value(&values_[f.option])->value_name(f.value_name),
                                  help.c_str());
        else
            options.add_options()(f.flag, po::bool_switch(&switches_[f.option]), help.c_str());
    }
}

const std::string& StageFlagValues::value(std::string_view option) const {
    static const std::string none, given = "1";
    if (auto s = switches_.find(option); s != switches_.end()) return s->second ? given : none;
    auto v = values_.find(option);
    return v == values_.end() ? none : v->second;
}

std::string StageFlagValues::stage_options() const {
    std::string text;
    for (const StageFlag& f : flags_) {
        const std::string& v = value(f.option);
        if (v.empty()) continue;
        if (!text.empty()) text += ',';
        text += std::string(f.option) + "=" + stage_value(v);
    }
    return text;
}

void add_run_options(po::options_description& options, ConvertArgs& a) {
    options.add_options()("dry-run,n", po::bool_switch(&a.dry_run),
                          "print the plan and write nothing")("force,f", po::bool_switch(&a.force),
                                                              "overwrite existing outputs")(
        "update,u", po::bool_switch(&a.update),
        "do nothing when the outputs' recipe record (OUTPUT.ckhost.json) says this pipeline made "
        "them from this input with this ckhost and plugins; else write them and the record");
}

int run_conversion(const ConvertArgs& a, const Common& c) {
    check_arguments(a, c);
    apply_globals(c);
    PluginRegistry registry(to_paths(c.plugin_dirs));
    Pipeline p(registry, a.pipeline);
    if (a.output == "-") check_streaming_writer(registry, p);
    ConvertSettings settings = settings_for(a, c);
    stop_on_interrupt();
    // A reader that goes away (`| head`) is a write error naming standard output, not a silent
    // death by SIGPIPE.
    if (a.output == "-") std::signal(SIGPIPE, SIG_IGN);
    std::optional<StdinSpool> spool;
    if (a.input == "-") settings.input_file = spool.emplace().path();
    ConvertResult result;
    try {
        result = p.run(settings);
    } catch (const ConversionError& e) {
        // The warnings before a failure, in the order given, then (in main) the error.
        if (!c.quiet) {
            print_warnings(registry.warnings());
            print_warnings(e.warnings());
        }
        throw;
    }
    print_result(result, registry, p, a, c);
    return ok;
}

int convert(const Args& args, OptionList* options_out) {
    Common c;
    ConvertArgs a;
    po::options_description d = convert_options(a);
    // INPUT and OUTPUT by position are -i and -o, which the option list shows.
    Positionals positionals;
    positionals.order.add("input", 1).add("output", 1);
    if (list_or_parse(args, d, positionals, c, convert_usage, options_out)) return ok;
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
