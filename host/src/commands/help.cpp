// `ckhost help COMMAND|STAGE`: a command's help (as `ckhost COMMAND --help`), or a stage's: where
// it goes in a pipeline, its options with their defaults and choices, and the examples its
// plugin's descriptor gives. A name that is both (quantize) gets both, the command first
// (docs/decisions/0047-help-for-stages.md).
#include <cstddef>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/plugin.hpp"
#include "ck/support/shell_quote.hpp"
#include "cli/command_line.hpp"
#include "cli/command_table.hpp"
#include "cli/exit_codes.hpp"
#include "cli/suggest.hpp"
#include "commands/commands.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* help_usage =
    "usage: ckhost help [COMMAND|STAGE]\n\n"
    "The general help, a command's help (as ckhost COMMAND --help), or a stage's: where it\n"
    "goes in a pipeline, its options with their defaults and choices, and examples. A name\n"
    "that is both a command and a stage (quantize) shows both, the command first.\n\n"
    "examples:\n"
    "  ckhost help quantize\n"
    "  ckhost help bump\n"
    "  ckhost --plugin-dir my-plugins help npy\n\n";

constexpr std::size_t help_width = 90;

// `text` as lines of at most `help_width` columns, the first starting with `indent` spaces,
// the others with `more_indent`; a word longer than a line (a list of choices without spaces)
// is cut after a '|' where it can be.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t more_indent) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string word; in >> word;) {
        while (more_indent + word.size() > help_width) {
            const std::size_t cut = word.rfind('|', help_width - more_indent - 1);
            if (cut == std::string::npos || cut == 0) break;
            words.push_back(word.substr(0, cut + 1));
            word.erase(0, cut + 1);
        }
        words.push_back(word);
    }
    std::string out, line;
    for (const std::string& word : words) {
        const std::size_t at = out.empty() ? indent : more_indent;
        if (!line.empty() && at + line.size() + 1 + word.size() > help_width) {
            out += std::string(at, ' ') + line + "\n";
            line.clear();
        }
        const bool glued = !line.empty() && line.back() == '|';
        line += (line.empty() || glued ? "" : " ") + word;
    }
    if (!line.empty()) out += std::string(out.empty() ? indent : more_indent, ' ') + line + "\n";
    return out;
}

// The descriptor's examples, when the plugin was built with headers that have the field.
const char* examples_of(const ck_plugin_descriptor& d) {
    constexpr std::size_t end = offsetof(ck_plugin_descriptor, examples) + sizeof(d.examples);
    return d.struct_size >= end ? d.examples : nullptr;
}

// Where a stage of each kind the plugin has goes in a pipeline.
std::string pipeline_places(const ck_plugin_descriptor& d) {
    const std::string stage = std::string(d.name) + (d.option_count ? "[OPTION=VALUE,...]" : "");
    std::string out;
    if (d.stages & CK_STAGE_READER) out += "  reader:     " + stage + "[:TRANSFORM...]:WRITER\n";
    if (d.stages & CK_STAGE_TRANSFORM)
        out += "  transform:  READER[:TRANSFORM...]:" + stage + "[:TRANSFORM...]:WRITER\n";
    if (d.stages & CK_STAGE_WRITER) out += "  writer:     READER[:TRANSFORM...]:" + stage + "\n";
    return out;
}

// One option: NAME=CHOICES (or NAME=VALUE), its default, the stage kinds that take it when the
// plugin has several, and its help. An option given without '=' means '=1' (a switch).
std::string option_entry(const ck_option_descriptor& o, std::uint32_t plugin_stages) {
    const bool one_kind = (plugin_stages & (plugin_stages - 1)) == 0;
    const bool is_switch =
        !o.choices && o.default_value && std::string_view(o.default_value) == "0";
    std::string head = std::string(o.name) + (is_switch ? "[=1]" : "=") +
                       (is_switch   ? ""
                        : o.choices ? o.choices
                                    : "VALUE");
    if (is_switch)
        head += " (a switch, off unless given)";
    else if (o.default_value)
        head += " (default " + std::string(*o.default_value ? o.default_value : "\"\"") + ")";
    if (!one_kind) head += " [" + stage_kinds_string(o.stages) + "]";
    return wrapped(head, 2, 6) + wrapped(o.help ? o.help : "", 6, 6);
}

// The examples, "PIPELINE INPUT OUTPUT" a line, as command lines to copy.
std::string example_lines(const char* examples) {
    std::string out;
    std::istringstream lines(examples ? examples : "");
    for (std::string line; std::getline(lines, line);) {
        const std::size_t output_at = line.find_last_of(' ');
        const std::size_t input_at =
            output_at == std::string::npos ? output_at : line.find_last_of(' ', output_at - 1);
        if (input_at == std::string::npos || input_at == 0) continue;  // not PIPELINE IN OUT
        out += "  ckhost --pipeline " + ck::support::shell_quote(line.substr(0, input_at)) +
               " -i " + line.substr(input_at + 1, output_at - input_at - 1) + " -o " +
               line.substr(output_at + 1) + "\n";
    }
    return out;
}

void print_stage_help(const PluginEntry& plugin, std::ostream& out) {
    const ck_plugin_descriptor& d = *plugin.descriptor;
    out << "stage " << d.name << " (" << stage_kinds_string(d.stages) << "), version "
        << (d.version ? d.version : "") << "\n"
        << wrapped(d.summary ? d.summary : "", 2, 2) << "  plugin: " << plugin.path.string()
        << "\n\nin a pipeline:\n"
        << pipeline_places(d);
    out << "\noptions" << (d.option_count ? ":\n" : ": none\n");
    for (std::size_t i = 0; i < d.option_count; ++i) out << option_entry(d.options[i], d.stages);
    if (const std::string examples = example_lines(examples_of(d)); !examples.empty())
        out << "\nexamples:\n" << examples;
    out << "\n'ckhost plugins' lists every stage found; an option's value with a ',' or ']' in it\n"
           "writes them '\\,' and '\\]'.\n";
}

// The command called `name`, or nullptr.
const Command* find_command(const std::string& name) {
    for (const Command& row : command_table())
        if (row.name == name) return &row;
    return nullptr;
}

bool registry_has_stage(const PluginRegistry& registry, const std::string& name) {
    for (const std::string& stage : registry.names())
        if (stage == name) return true;
    return false;
}

}  // namespace

int help_topic(const std::string& topic, const Args& args) {
    Common c;
    po::options_description d("help options");
    if (list_or_parse(args, d, {}, c, help_usage, nullptr, uses_plugin_dir)) return ok;
    apply_globals(c);
    PluginRegistry registry(to_paths(c.plugin_dirs));
    const Command* command = find_command(topic);
    const bool stage = registry_has_stage(registry, topic);
    if (!command && !stage) {
        std::vector<std::string> names = command_names();
        const std::vector<std::string> stages = registry.names();
        names.insert(names.end(), stages.begin(), stages.end());
        throw ck::usage_error("help " + topic + ": unknown command" + did_you_mean(topic, names) +
                              " (commands: " + join(command_names()) +
                              "; stages: " + (stages.empty() ? "none found" : join(stages)) + ")");
    }
    if (command) {
        const int code = command->run({"--help"}, nullptr);
        if (!stage) return code;
        std::cout << "\n";
    }
    print_stage_help(registry.get(topic), std::cout);
    return ok;
}

}  // namespace ckhost::commands
