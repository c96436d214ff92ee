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
struct SplitArgs {
    std::string max_tensors, max_size, prefix;
    bool no_tensor_first = false;
};

po::options_description split_options(SplitArgs& s, ConvertArgs& a) {
    po::options_description d("split options (llama-gguf-split's)");
    d.add_options()("split-max-tensors", po::value(&s.max_tensors)->value_name("N"),
                    "at most N tensors per shard (split_max_tensors=N; the default: 128)")(
        "split-max-size", po::value(&s.max_size)->value_name("N(M|G)"),
        "at most N megabytes (M) or gigabytes (G) of tensor data per shard (split_max_size)")(
        "no-tensor-first-split", po::bool_switch(&s.no_tensor_first),
        "the first shard holds the metadata and no tensor (split_no_tensor_first)");
    add_run_options(d, a);
    return d;
}

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

std::string split_pipeline(const SplitArgs& s) {
    if (!s.max_tensors.empty() && !s.max_size.empty())
        throw ck::usage_error(
            "--split-max-tensors and --split-max-size both given: a set is cut one way");
    // llama-gguf-split's default is 128 tensors a shard; the writer alone writes one file.
    std::string options =
        s.max_size.empty()
            ? "split_max_tensors=" + stage_value(s.max_tensors.empty() ? "128" : s.max_tensors)
            : "split_max_size=" + stage_value(s.max_size);
    if (s.no_tensor_first) options += ",split_no_tensor_first=1";
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
    SplitArgs s;
    po::options_description d = split_options(s, a);
    const std::vector<Argument> arguments = {{"INPUT", &a.input}, {"OUTPUT_PREFIX", &s.prefix}};
    if (list_or_parse(args, d, positional_strings(arguments), c, split_usage, options_out))
        return ok;
    require_arguments(arguments, 2, "split [options] INPUT OUTPUT_PREFIX");
    a.pipeline = split_pipeline(s);
    a.output = split_output(s.prefix);
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
