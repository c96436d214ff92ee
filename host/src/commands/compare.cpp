// `ckhost compare A B [B...]`: how much each tensor of B differs from A's (compare/).
#include <iostream>

#include "ck/error.hpp"
#include "cli/command_line.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "compare/compare.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* compare_usage =
    "usage: ckhost compare A B [B...] [--report FILE.html] [--imatrix FILE] [--top N] [--json]\n\n"
    "How much each tensor of B differs from A's: both dequantized exactly to F32, tensors\n"
    "matched by name (any format a reader opens: GGUF, split sets, safetensors, bump,\n"
    "GGUF-lite, Hugging Face checkpoints, whose names the hf reader maps to llama.cpp's).\n"
    "Per tensor: RMSE, max abs error, relative error (RMSE / RMS of A), cosine similarity,\n"
    "SNR in dB (10 log10 of A's energy over the error's; inf when identical), both types and\n"
    "bits per weight; --imatrix adds the error weighted by an importance matrix as the\n"
    "quantizers weigh it (w-SNR). Summaries per type and for the model; tensors only on one\n"
    "side, of other shapes, or holding NaN or infinite values are listed. The table shows\n"
    "the worst tensors first; --json has every tensor, layer and kind; --report writes one\n"
    "self-contained HTML file (heatmap, bars, tables), several B files side by side.\n\n"
    "examples:\n"
    "  ckhost compare model-f16.gguf model-q4_k_m.gguf\n"
    "  ckhost compare model-f16.gguf q4_k_m.gguf iq4_xs.gguf --report quants.html\n"
    "  ckhost compare checkpoint/ model-q8_0.gguf --imatrix imatrix.gguf --top 10\n\n";

void check_arguments(const std::vector<std::string>& files, const compare::CompareSettings& s,
                     long long top) {
    if (files.size() < 2)
        throw ck::usage_error(files.empty() ? "missing A and B: compare A B [B...]"
                                            : "missing B: compare A B [B...]");
    for (const auto& file : files)
        if (file == "-")
            throw ck::usage_error(
                "compare -: standard input is not supported here; give a file path (./- for a "
                "file named '-')");
    if (top < 1)
        throw ck::usage_error("--top " + std::to_string(top) +
                              ": expected a number of tensors, at least 1");
    if (s.update && s.report.empty())
        throw ck::usage_error("--update keeps a report up to date: give --report FILE.html too");
    if (s.report == "-")
        throw ck::usage_error(
            "--report -: the report is a file; the table or --json goes to "
            "standard output");
}

}  // namespace

int compare(const Args& args, OptionList* options_out) {
    Common c;
    compare::CompareSettings settings;
    std::vector<std::string> files;
    std::string report, imatrix;
    long long top = 20;  // signed: Boost would read --top -1 as a huge unsigned number
    po::options_description d("compare options");
    d.add_options()("report", po::value(&report),
                    "write a self-contained HTML report to FILE (heatmap, bars, tables)")(
        "imatrix", po::value(&imatrix),
        "weigh the error by this importance matrix (llama-imatrix's GGUF or .dat), as the "
        "quantizers do")("top", po::value(&top),
                         "rows of the table, worst first (default 20; --json has every tensor)")(
        "force,f", po::bool_switch(&settings.force), "replace a report that exists")(
        "update,u", po::bool_switch(&settings.update),
        "do nothing when the report's recipe record (FILE.html.ckhost.json) says these files, "
        "unchanged, made it with this ckhost");
    if (list_or_parse(
            args, d, positional_argument("file", po::value(&files), -1), c, compare_usage,
            options_out,
            uses_plugin_dir | uses_isa | uses_threads | uses_no_sync | uses_quiet | uses_json))
        return ok;
    settings.report = report;
    settings.imatrix = imatrix;
    check_arguments(files, settings, top);
    settings.top = static_cast<std::size_t>(top);
    settings.a = files.front();
    settings.b.assign(files.begin() + 1, files.end());
    apply_globals(c);
    settings.json = c.json;
    settings.quiet = c.quiet;
    settings.sync = sync_outputs(c);
    ckhost::PluginRegistry registry(to_paths(c.plugin_dirs));
    if (!c.quiet)
        for (const auto& w : registry.warnings()) std::cerr << "warning: " << w << "\n";
    return compare::run_compare(registry, settings, std::cout, std::cerr);
}

}  // namespace ckhost::commands
