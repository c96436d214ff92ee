// `ckhost quantize`: llama-quantize's command line, run as the pipeline
// gguf:quantize[mix=TYPE,...]:gguf through convert's machinery.
#include <string>

#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "commands/conversion_command.hpp"

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
};

// The positional arguments beyond INPUT and OUTPUT.
struct QuantizeArgs {
    std::string type, thread_count;
};

constexpr const char* quantize_usage =
    "usage: ckhost quantize [options] INPUT OUTPUT TYPE [THREADS]\n\n"
    "Quantizes a GGUF file as llama-quantize does, byte for byte: TYPE is a llama-quantize\n"
    "file type (Q4_K_M, Q8_0, ..., or its number), THREADS the worker threads (as --threads).\n"
    "It runs the pipeline gguf:quantize[mix=TYPE,...]:gguf, each flag one stage option\n"
    "('ckhost plugins' lists them), so --dry-run, --force, --update and --json are convert's.\n"
    "Not taken: --imatrix, --include-weights, --exclude-weights, --keep-split, --override-kv\n"
    "(put a meta[set=KEY=TYPE:VALUE] stage in a convert pipeline for that).\n\n"
    "examples:\n"
    "  ckhost quantize model-f16.gguf model-q4_k_m.gguf Q4_K_M\n"
    "  ckhost quantize --pure --output-tensor-type q8_0 model-f16.gguf out.gguf Q4_K_M 8\n\n";

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

std::string quantize_pipeline(const QuantizeArgs& q, const StageFlagValues& flags) {
    std::string options = "mix=" + stage_value(q.type);
    if (const std::string more = flags.stage_options(); !more.empty()) options += "," + more;
    return "gguf:quantize[" + options + "]:gguf";
}

}  // namespace

int quantize(const Args& args, OptionList* options_out) {
    Common c;
    ConvertArgs a;
    QuantizeArgs q;
    StageFlagValues flags(quantize_flags);
    po::options_description d("quantize options (llama-quantize's)");
    flags.add_to(d);
    add_run_options(d, a);
    const std::vector<Argument> arguments = {{"INPUT", &a.input},
                                             {"OUTPUT", &a.output},
                                             {"TYPE", &q.type},
                                             {"THREADS", &q.thread_count}};
    if (list_or_parse(args, d, positional_strings(arguments), c, quantize_usage, options_out))
        return ok;
    require_arguments(arguments, 3, "quantize [options] INPUT OUTPUT TYPE [THREADS]");
    take_thread_count(q, c);
    a.pipeline = quantize_pipeline(q, flags);
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
