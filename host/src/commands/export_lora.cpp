// `ckhost export-lora`: llama-export-lora's command line, run as the pipeline
// gguf:lora[adapter=...,scale=...,export_lora]:gguf through convert's machinery.
#include <charconv>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "commands/conversion_command.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;

namespace {

constexpr const char* export_lora_usage =
    "usage: ckhost export-lora -m BASE.gguf --lora A.gguf[,B.gguf] [--lora-scaled C.gguf:S[,...]]\n"
    "                          [-o OUT.gguf] [-t N]\n\n"
    "Merges GGUF LoRA adapters into a model as llama-export-lora does: each weight they change\n"
    "becomes W + scale * alpha / r * B A, computed in float32 as llama-export-lora computes it,\n"
    "written as F16 (F32 stays F32); every other tensor is copied; the tensors come sorted by\n"
    "name and general.file_type last as 1 (MOSTLY_F16). Adapters are merged in the order given\n"
    "(--lora at scale 1, --lora-scaled at its own). It runs the pipeline\n"
    "gguf:lora[adapter={A,B},scale={1,S},export_lora]:gguf, so --dry-run, --force, --update and\n"
    "--json are convert's; every adapter is checked against the base (architecture, tensors,\n"
    "shapes, types) before anything is written. -t N is --threads N; the output does not depend\n"
    "on it. Other types for the merged tensors: 'ckhost help lora'.\n\n"
    "examples:\n"
    "  ckhost export-lora -m model-f16.gguf --lora adapter.gguf -o merged-f16.gguf\n"
    "  ckhost export-lora -m model-f16.gguf --lora-scaled a.gguf:0.5,b.gguf:1 -o merged.gguf\n\n";

struct ExportLoraArgs {
    std::vector<std::string> loras, scaled;
    std::string threads;
};

// llama.cpp's parse_csv_row: fields separated by commas; a field may be quoted ("a,b.gguf"),
// with "" for a quote inside.
std::vector<std::string> csv_fields(const std::string& row) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < row.size(); ++i) {
        const char c = row[i];
        if (c == '"' && !quoted && fields.back().empty())
            quoted = true;
        else if (c == '"' && quoted && i + 1 < row.size() && row[i + 1] == '"')
            fields.back() += row[++i];
        else if (c == '"' && quoted)
            quoted = false;
        else if (c == ',' && !quoted)
            fields.emplace_back();
        else
            fields.back() += c;
    }
    return fields;
}

float parse_scale(const std::string& item, const std::string& text) {
    float scale = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), scale);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        throw ck::usage_error("--lora-scaled '" + item + "': '" + text +
                              "' is not a number (format: FNAME:SCALE)");
    return scale;
}

// The adapters with their scales in command-line order, --lora and --lora-scaled interleaved
// as given (llama.cpp's parser appends both to one list).
std::vector<std::pair<std::string, float>> adapters_in_order(const Args& args) {
    std::vector<std::pair<std::string, float>> adapters;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string flag = args[i], value;
        if (const auto eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag.resize(eq);
        } else if ((flag == "--lora" || flag == "--lora-scaled") && i + 1 < args.size()) {
            value = args[++i];
        }
        if (flag == "--lora")
            for (const std::string& path : csv_fields(value)) adapters.emplace_back(path, 1.0f);
        if (flag != "--lora-scaled") continue;
        for (const std::string& item : csv_fields(value)) {
            const auto colon = item.find(':');
            if (colon == std::string::npos || item.find(':', colon + 1) != std::string::npos)
                throw ck::usage_error("--lora-scaled '" + item + "': format FNAME:SCALE");
            adapters.emplace_back(item.substr(0, colon), parse_scale(item, item.substr(colon + 1)));
        }
    }
    return adapters;
}

std::string float_text(float x) {
    char text[32];
    const auto written = std::to_chars(text, text + sizeof text, x);
    return std::string(text, written.ptr);
}

std::string lora_pipeline(const std::vector<std::pair<std::string, float>>& adapters) {
    if (adapters.empty())
        throw ck::usage_error("give an adapter: --lora FILE.gguf or --lora-scaled FILE.gguf:SCALE");
    std::string paths, scales;
    for (const auto& [path, scale] : adapters) {
        if (adapters.size() > 1 && path.find_first_of(",{}") != std::string::npos)
            throw ck::usage_error("adapter '" + path +
                                  "': with several adapters a path may not hold ',', '{' or "
                                  "'}' (rename it, or merge one adapter at a time)");
        paths += (paths.empty() ? "" : ",") + (adapters.size() > 1 ? path : stage_value(path));
        scales += (scales.empty() ? "" : ",") + float_text(scale);
    }
    if (adapters.size() > 1) {
        paths = "{" + paths + "}";
        scales = "{" + scales + "}";
    }
    return "gguf:lora[adapter=" + paths + ",scale=" + scales + ",export_lora]:gguf";
}

void take_threads(const std::string& given, Common& c) {
    if (given.empty()) return;
    if (c.threads != -1)
        throw ck::usage_error("-t and --threads both given: give the thread count once");
    const std::optional<unsigned> n = ck::parse_thread_count(given.c_str());
    if (!n)
        throw ck::usage_error("-t '" + given + "': expected a number from 1 to " +
                              std::to_string(ck::max_threads));
    c.threads = *n;
}

}  // namespace

int export_lora(const Args& args, OptionList* options_out) {
    Common c;
    ConvertArgs a;
    ExportLoraArgs e;
    po::options_description d("export-lora options (llama-export-lora's)");
    d.add_options()("model,m", po::value(&a.input)->value_name("BASE.gguf"),
                    "the model the adapters are merged into")(
        "lora", po::value(&e.loras)->composing()->value_name("FNAME[,FNAME]"),
        "adapters merged at scale 1 (comma-separated)")(
        "lora-scaled", po::value(&e.scaled)->composing()->value_name("FNAME:SCALE[,...]"),
        "adapters merged at their scale (comma-separated FNAME:SCALE items)")(
        "output,o", po::value(&a.output)->value_name("OUT.gguf"),
        "the merged model (default: ggml-lora-merged-f16.gguf)")(
        ",t", po::value(&e.threads)->value_name("N"), "worker threads (as --threads)");
    add_run_options(d, a);
    if (list_or_parse(args, d, {}, c, export_lora_usage, options_out)) return ok;
    if (a.input.empty()) throw ck::usage_error("missing -m BASE.gguf (the model to merge into)");
    if (e.loras.size() + e.scaled.size() > 1 && !c.quiet)
        std::cerr << "warning: --lora / --lora-scaled given several times: every one is merged, "
                     "in the order given (llama.cpp prefers comma-separated values)\n";
    take_threads(e.threads, c);
    if (a.output.empty()) a.output = "ggml-lora-merged-f16.gguf";
    a.pipeline = lora_pipeline(adapters_in_order(args));
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
