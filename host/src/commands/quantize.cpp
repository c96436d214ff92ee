// `ckhost quantize`: llama-quantize's command line, run as the pipeline
// gguf:quantize[mix=TYPE,...]:gguf through convert's machinery.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <boost/algorithm/string/join.hpp>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "ck/stage.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "commands/conversion_command.hpp"
#include "pipeline/plugin_call.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

// llama-quantize's flags, each one quantize stage option.
constexpr StageFlag quantize_flags[] = {
    {"pure", "pure", nullptr, "every weight the mixture's default type"},
    {"output-tensor-type", "output_type", "T", "output.weight's type"},
    {"token-embedding-type", "embd_type", "T", "token_embd.weight's type"},
    {"leave-output-tensor", "leave_output", nullptr, "copy output.weight as it is"},
    {"allow-requantize", "requantize", nullptr, "quantize tensors that are already quantized"},
    {"imatrix", "imatrix", "FILE", "importance matrix from llama-imatrix (GGUF or .dat)"},
};

// The positional arguments beyond INPUT and OUTPUT, and the repeatable flags.
struct QuantizeArgs {
    std::string type, thread_count;
    std::vector<std::string> overrides;
    std::vector<std::string> include_weights, exclude_weights, tensor_types, tensor_type_files;
    std::string prune_layers;
    bool keep_split = false;
};

constexpr const char* quantize_usage =
    "usage: ckhost quantize [options] INPUT OUTPUT TYPE [THREADS]\n\n"
    "Quantizes a GGUF file as llama-quantize does, byte for byte: TYPE is a llama-quantize\n"
    "file type (Q4_K_M, Q8_0, ..., or its number), THREADS the worker threads (as --threads).\n"
    "It runs the pipeline gguf:quantize[mix=TYPE,...]:gguf, each flag one stage option\n"
    "('ckhost help quantize' lists them), and each --override-kv KEY=TYPE:VALUE (TYPE int,\n"
    "float, bool or str; stored as u32, f32, bool or str, as llama-quantize stores them) two\n"
    "meta stages before the writer, so --dry-run, --force, --update and --json are convert's.\n"
    "--include-weights, --exclude-weights and --tensor-type may be repeated, and\n"
    "--tensor-type-file FILE holds PATTERN=TYPE items separated by spaces or lines.\n"
    "--keep-split writes one shard per file of the input (a llama.cpp split set, or one file),\n"
    "OUTPUT without .gguf as the prefix: PREFIX-00001-of-0000N.gguf, ... (the pipeline then\n"
    "ends gguf:quantize[...,order=keep_split]:gguf[split_counts=N1 N2 ...]).\n\n"
    "examples:\n"
    "  ckhost quantize model-f16.gguf model-q4_k_m.gguf Q4_K_M\n"
    "  ckhost quantize --pure --output-tensor-type q8_0 model-f16.gguf out.gguf Q4_K_M 8\n"
    "  ckhost quantize --imatrix model.imatrix.gguf model-f16.gguf model-iq2_xxs.gguf IQ2_XXS\n"
    "  ckhost quantize --override-kv general.name=str:Tiny model-f16.gguf out.gguf 15\n"
    "  ckhost quantize --keep-split model-f16-00001-of-00003.gguf model-q4_k_m.gguf Q4_K_M\n\n";

// One --override-kv KEY=TYPE:VALUE as the meta `set` value llama-quantize's result equals:
// gguf_set_val_u32 for int (llama.cpp since its PR 14182; earlier i32), gguf_set_val_f32 of the
// double for float, bool, str. Values are read strictly: llama.cpp's atol and atof would take
// `int:12abc` as 12 and `int:abc` as 0, which hides a typo.
std::string override_value(const std::string& given) {
    const std::size_t equals = given.find('=');
    const std::string key = given.substr(0, equals), typed = given.substr(equals + 1);
    const auto refuse = [&](const std::string& why) {
        return ck::usage_error("--override-kv " + given + ": " + why);
    };
    if (equals == std::string::npos || key.empty())
        throw refuse("expected KEY=TYPE:VALUE (e.g. general.name=str:My Model)");
    // The key is a meta `del` pattern too: a glob character would match other keys.
    if (key.find_first_of("*?[]{}\\") != std::string::npos)
        throw refuse("a key with a glob character (* ? [ ] { } \\) is not taken here");
    const std::size_t colon = typed.find(':');
    const std::string type = typed.substr(0, colon), value = typed.substr(colon + 1);
    const char* const end = value.data() + value.size();
    if (colon != std::string::npos && type == "int") {
        std::int64_t n = 0;
        if (std::from_chars(value.data(), end, n).ptr != end || value.empty())
            throw refuse("'" + value + "' is not a whole decimal number");
        if (n < 0 || n > std::numeric_limits<std::uint32_t>::max())
            throw refuse("llama-quantize stores an int override as u32, so " + value +
                         " would not be kept (from 0 to 4294967295; for another type use a "
                         "meta[set=KEY=TYPE:VALUE] stage in a convert pipeline)");
        return key + "=u32:" + value;
    }
    if (colon != std::string::npos && type == "float") {
        double x = 0;
        if (std::from_chars(value.data(), end, x).ptr != end || value.empty())
            throw refuse("'" + value + "' is not a number");
        const auto narrowed = static_cast<float>(x);
        if (std::isfinite(x) && !std::isfinite(narrowed))
            throw refuse(value + " is beyond f32's range (llama-quantize stores floats as f32)");
        char text[64];
        const auto written = std::to_chars(text, text + sizeof text, narrowed);
        return key + "=f32:" + std::string(text, written.ptr);
    }
    if (colon != std::string::npos && type == "bool") {
        if (value != "true" && value != "false")
            throw refuse("a bool is true or false, not '" + value + "'");
        return key + "=bool:" + value;
    }
    if (colon != std::string::npos && type == "str") return key + "=str:" + value;
    throw refuse("TYPE must be int, float, bool or str (KEY=TYPE:VALUE)");
}

// The meta stages that give each override's key its value where gguf_set_val_* puts it: the
// first sets it (in place, or appended when new), the second deletes it and sets it again, so
// it ends the metadata in the order given, as in llama-quantize's file. general.architecture,
// which meta never deletes, is set in place.
std::string override_stages(const std::vector<std::string>& overrides) {
    std::string stages;
    for (const std::string& given : overrides) {
        const std::string set = stage_value(override_value(given));
        const std::string key = given.substr(0, given.find('='));
        stages += ":meta[set=" + set + "]";
        if (key != "general.architecture")
            stages += ":meta[del=" + stage_value(key) + ",set=" + set + "]";
    }
    return stages;
}

// THREADS, as llama-quantize's last argument, is --threads; both at once would be ambiguous.
void take_thread_count(const QuantizeArgs& q, Common& c) {
    if (q.thread_count.empty()) return;
    if (c.threads != -1)
        throw ck::usage_error("THREADS '" + q.thread_count +
                              "' and --threads both given: give the thread count once");
    const std::optional<unsigned> n = ck::parse_thread_count(q.thread_count.c_str());
    if (!n)
        throw ck::usage_error("THREADS '" + q.thread_count + "': expected a number from 1 to " +
                              std::to_string(ck::max_threads));
    c.threads = *n;
}

// The repeatable flags as stage options: each a list of items separated by spaces.
std::string list_options(const QuantizeArgs& q) {
    std::vector<std::string> tensor_types = q.tensor_types;
    for (const std::string& file : q.tensor_type_files) {
        std::ifstream in(file);
        if (!in) throw ck::file_error("cannot read the --tensor-type-file", file);
        for (std::string item; in >> item;) tensor_types.push_back(item);
    }
    std::string options;
    const auto add = [&options](const char* option, const std::vector<std::string>& items) {
        if (items.empty()) return;
        options +=
            std::string(",") + option + "=" + stage_value(boost::algorithm::join(items, " "));
    };
    add("include_weights", q.include_weights);
    add("exclude_weights", q.exclude_weights);
    add("tensor_type", tensor_types);
    if (!q.prune_layers.empty()) {
        std::string layers = q.prune_layers;
        std::replace(layers.begin(), layers.end(), ',', ' ');
        options += ",prune_layers=" + stage_value(layers);
    }
    return options;
}

// --keep-split's refusals, before anything is read.
void check_keep_split(const QuantizeArgs& q, const ConvertArgs& a) {
    if (!q.prune_layers.empty())
        throw ck::usage_error(
            "--keep-split with --prune-layers is not taken: a pruned shard may be left without "
            "tensors (llama-quantize fails there); quantize to one file, then 'ckhost split' it");
    if (a.input == "-")
        throw ck::usage_error(
            "--keep-split with INPUT -: the shards of the input are read from its files; give "
            "a file path");
    if (a.output == "-")
        throw ck::usage_error("--keep-split with OUTPUT -: it writes one file per input shard");
    if (a.output.empty() || a.output.back() == '/')
        throw ck::usage_error("OUTPUT '" + a.output +
                              "' names no file: with --keep-split the shards are "
                              "OUTPUT-00001-of-0000N.gguf (OUTPUT without .gguf)");
}

// The tensor count of each file of `input`, a llama.cpp split set or one file, as the gguf
// reader reports them: its facts "shard 1 tensors", "shard 2 tensors", ... (inspect --json's
// shard_1_tensors, ...), which only a set has.
std::string input_shard_counts(const std::string& input, const Common& c) {
    apply_globals(c);
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    ck::RecordingContext context;  // the conversion reads the input again and warns then
    const ckhost::PluginEntry& gguf = registry.get("gguf");
    const std::unique_ptr<ck::Reader> reader(ckhost::call_plugin(
        "gguf", [&] { return gguf.descriptor->create_reader(ck::Options(), context); }));
    const ck::ModelHeader header = ckhost::call_plugin("gguf", [&] { return reader->open(input); });
    std::vector<std::string> counts;
    for (const auto& [fact, value] : header.format_facts)
        if (fact == "shard " + std::to_string(counts.size() + 1) + " tensors")
            counts.push_back(value);
    if (counts.empty()) counts.push_back(std::to_string(header.tensors.size()));
    return boost::algorithm::join(counts, " ");
}

// `split_counts` (with --keep-split): the quantize stage keeps the input's tensor order with
// llama-quantize's key layout, and the writer ends a shard where each input shard ends.
std::string quantize_pipeline(const QuantizeArgs& q, const StageFlagValues& flags,
                              const std::string& split_counts) {
    std::string options = "mix=" + stage_value(q.type);
    if (const std::string more = flags.stage_options(); !more.empty()) options += "," + more;
    options += list_options(q);
    if (!split_counts.empty()) options += ",order=keep_split";
    const std::string writer =
        split_counts.empty() ? "gguf" : "gguf[split_counts=" + stage_value(split_counts) + "]";
    return "gguf:quantize[" + options + "]" + override_stages(q.overrides) + ":" + writer;
}

}  // namespace

int quantize(const Args& args, OptionList* options_out) {
    Common c;
    ConvertArgs a;
    QuantizeArgs q;
    StageFlagValues flags(quantize_flags);
    po::options_description d("quantize options (llama-quantize's)");
    flags.add_to(d);
    d.add_options()("override-kv",
                    po::value(&q.overrides)->composing()->value_name("KEY=TYPE:VALUE"),
                    "give a metadata key a value: TYPE int (stored u32), float (f32), bool or str; "
                    "repeatable (two meta stages each)");
    d.add_options()("include-weights",
                    po::value(&q.include_weights)->composing()->value_name("TEXT"),
                    "use only importance matrix entries whose name contains TEXT; repeatable "
                    "(include_weights)")(
        "exclude-weights", po::value(&q.exclude_weights)->composing()->value_name("TEXT"),
        "drop importance matrix entries whose name contains TEXT; repeatable (exclude_weights)")(
        "tensor-type", po::value(&q.tensor_types)->composing()->value_name("PATTERN=TYPE"),
        "TYPE for tensors whose name the regex PATTERN matches, first match wins; repeatable "
        "(tensor_type)")("tensor-type-file",
                         po::value(&q.tensor_type_files)->composing()->value_name("FILE"),
                         "PATTERN=TYPE items separated by spaces or lines (tensor_type)")(
        "prune-layers", po::value(&q.prune_layers)->value_name("L0,L1,..."),
        "leave these layers out and renumber the rest (prune_layers)")(
        "keep-split", po::bool_switch(&q.keep_split),
        "one output shard per input shard, named OUTPUT-00001-of-0000N.gguf, ... (OUTPUT "
        "without .gguf)");
    add_run_options(d, a);
    const std::vector<Argument> arguments = {{"INPUT", &a.input},
                                             {"OUTPUT", &a.output},
                                             {"TYPE", &q.type},
                                             {"THREADS", &q.thread_count}};
    if (list_or_parse(args, d, positional_strings(arguments), c, quantize_usage, options_out))
        return ok;
    require_arguments(arguments, 3, "quantize [options] INPUT OUTPUT TYPE [THREADS]");
    take_thread_count(q, c);
    std::string split_counts;
    if (q.keep_split) {
        check_keep_split(q, a);
        // The writer names the shards after -o PREFIX.gguf, as llama-quantize after OUTPUT
        // without its .gguf.
        if (!a.output.ends_with(".gguf")) a.output += ".gguf";
        split_counts = input_shard_counts(a.input, c);
    }
    a.pipeline = quantize_pipeline(q, flags, split_counts);
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
