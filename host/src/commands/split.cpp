// `ckhost split`: llama-gguf-split --split's command line, run as the pipeline
// gguf:gguf[split_...] through convert's machinery, its shards named as llama-gguf-split names
// them.
#include <string>

#include "ck/error.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "commands/conversion_command.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

// llama-gguf-split's flags, each one gguf writer option.
// llama-gguf-split's flags, each one gguf writer option.
constexpr StageFlag split_flags[] = {
    {"split-max-tensors", "split_max_tensors", "N",
     "at most N tensors per shard (the default: 128)"},
    {"split-max-size", "split_max_size", "N(M|G)",
     "at most this much tensor data per shard: N bytes, NM or NG as llama-gguf-split reads them "
     "(1000^2, 1000^3), or NMB, NGiB, ..."},
    {"no-tensor-first-split", "split_no_tensor_first", nullptr,
     "the first shard holds the metadata and no tensor"},
};

constexpr const char* split_usage =
    "usage: ckhost split [options] INPUT OUTPUT_PREFIX\n\n"
    "Cuts a GGUF file into a llama.cpp split set, each shard byte-identical to what\n"
    "llama-gguf-split --split writes: OUTPUT_PREFIX-00001-of-0000N.gguf, ... It runs the\n"
    "pipeline gguf:gguf[split_max_tensors=N] (or split_max_size, split_no_tensor_first) with\n"
    "-o OUTPUT_PREFIX.gguf, so --dry-run, --force, --update and --json are convert's.\n"
    "'ckhost merge' makes one file of a set again.\n\n"
    "examples:\n"
    "  ckhost split --split-max-size 2G model.gguf shards/model\n"
    "  ckhost split --split-max-tensors 128 model.gguf model\n\n";

std::string split_pipeline(const StageFlagValues& flags) {
    const bool by_size = !flags.value("split_max_size").empty();
    const bool by_count = !flags.value("split_max_tensors").empty();
    if (by_size && by_count)
        throw ck::usage_error(
            "--split-max-tensors and --split-max-size both given: a set is cut one way");
    std::string options = flags.stage_options();
    // llama-gguf-split's default is 128 tensors a shard; the writer alone writes one file.
    if (!by_size && !by_count)
        options = "split_max_tensors=128" + (options.empty() ? "" : "," + options);
    return "gguf:gguf[" + options + "]";
}

// The writer makes PREFIX-00001-of-0000N.gguf from -o PREFIX.gguf (it drops .gguf), which is
// llama-gguf-split's naming from PREFIX, also for a PREFIX that itself ends in .gguf.
std::string split_output(const std::string& prefix) {
    if (prefix.empty() || prefix.back() == '/')
        throw ck::usage_error("OUTPUT_PREFIX '" + prefix +
                              "' names no file: the shards are PREFIX-00001-of-0000N.gguf "
                              "(e.g. shards/model)");
    return prefix == "-" ? prefix : prefix + ".gguf";
}

}  // namespace

int split(const Args& args, OptionList* options_out) {
    Common c;
    ConvertArgs a;
    std::string prefix;
    StageFlagValues flags(split_flags);
    po::options_description d("split options (llama-gguf-split's)");
    flags.add_to(d);
    add_run_options(d, a);
    const std::vector<Argument> arguments = {{"INPUT", &a.input}, {"OUTPUT_PREFIX", &prefix}};
    if (list_or_parse(args, d, positional_strings(arguments), c, split_usage, options_out))
        return ok;
    require_arguments(arguments, 2, "split [options] INPUT OUTPUT_PREFIX");
    a.pipeline = split_pipeline(flags);
    a.output = split_output(prefix);
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
