// `ckhost merge`: llama-gguf-split --merge's command line. Reading any shard of a split set
// reads the whole set, so this is the pipeline gguf:gguf, run through convert's machinery.
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "commands/conversion_command.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* merge_usage =
    "usage: ckhost merge [options] FIRST_SHARD OUTPUT\n\n"
    "Makes one GGUF file of a llama.cpp split set, byte-identical to what\n"
    "llama-gguf-split --merge writes. It runs the pipeline gguf:gguf (the gguf reader reads\n"
    "every shard of the set from any one of them), so --dry-run, --force, --update and --json\n"
    "are convert's.\n\n"
    "example:\n"
    "  ckhost merge shards/model-00001-of-00003.gguf model.gguf\n\n";

}  // namespace

int merge(const Args& args, OptionList* options_out) {
    Common c;
    ConvertArgs a;
    po::options_description d("merge options");
    add_run_options(d, a);
    const std::vector<Argument> arguments = {{"FIRST_SHARD", &a.input}, {"OUTPUT", &a.output}};
    if (list_or_parse(args, d, positional_strings(arguments), c, merge_usage, options_out))
        return ok;
    require_arguments(arguments, 2, "merge FIRST_SHARD OUTPUT");
    a.pipeline = "gguf:gguf";
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
