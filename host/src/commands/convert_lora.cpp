// `ckhost convert-lora`: convert_lora_to_gguf.py's command line, run as the pipeline
// hf[base=BASE,outtype=TYPE]:gguf (the hf reader's adapter mode) through convert's machinery.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/stage.hpp"
#include "cli/exit_codes.hpp"
#include "commands/commands.hpp"
#include "commands/conversion_command.hpp"
#include "pipeline/plugin_call.hpp"
#include "registry/plugin_registry.hpp"

namespace ckhost::commands {

using namespace ckhost::cli;
namespace fs = std::filesystem;

namespace {

// convert_lora_to_gguf.py's flags that are hf reader options.
constexpr StageFlag adapter_flags[] = {
    {"base", "base", "DIR",
     "the base model's folder: its config.json gives the architecture (no weights needed)"},
    {"outtype", "outtype", "TYPE",
     "f32 (the default), f16, bf16 or q8_0 (q8_0 where rows are a multiple of 32, else f16)"},
    {"peft-scale", "peft_scale", nullptr,
     "with use_rslora: write adapter.lora.alpha = lora_alpha * sqrt(r), which llama.cpp scales "
     "as PEFT does (the converter writes lora_alpha and warns)"},
};

struct ConvertLoraArgs {
    std::string adapter, outfile, base_model_id;
    bool bigendian = false, ignored = false;
};

constexpr const char* convert_lora_usage =
    "usage: ckhost convert-lora [options] ADAPTER --base BASE [--outtype TYPE] [--outfile OUT]\n\n"
    "Converts a PEFT LoRA adapter folder (adapter_config.json, adapter_model.safetensors) to a\n"
    "GGUF LoRA adapter, byte for byte as llama.cpp's convert_lora_to_gguf.py does, with the\n"
    "base model's config.json for the architecture. It runs the pipeline\n"
    "hf[base=BASE,outtype=TYPE]:gguf, so --dry-run, --force, --update and --json are convert's.\n"
    "Without --outfile the file is ADAPTER/NAME-TYPE-LoRA.gguf, named as the converter names it;\n"
    "{ftype} in --outfile is the type (lowercase; {FTYPE} uppercase). --bigendian writes a\n"
    "big-endian GGUF (gguf[endian=big]); --no-lazy, --verbose and --trust-remote-code change\n"
    "nothing here. 'ckhost export-lora' merges GGUF adapters into a model.\n\n"
    "examples:\n"
    "  ckhost convert-lora my-adapter --base Llama-3.2-1B --outtype f16 --outfile a-f16.gguf\n"
    "  ckhost convert-lora my-adapter --base Llama-3.2-1B --outtype q8_0\n\n";

std::string upper(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return text;
}

// gguf-py's fill_templated_filename (Python's str.format): {}, {0}, {ftype} and {outtype} are
// the type in lowercase, {FTYPE} and {OUTTYPE} in uppercase, {{ and }} braces.
std::string fill_template(const std::string& name, const std::string& outtype) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if ((c == '{' || c == '}') && i + 1 < name.size() && name[i + 1] == c) {
            out += c;
            ++i;
            continue;
        }
        if (c == '}') throw ck::usage_error("--outfile '" + name + "': a single '}'");
        if (c != '{') {
            out += c;
            continue;
        }
        const std::size_t end = name.find('}', i);
        const std::string field = name.substr(i + 1, end == std::string::npos ? 0 : end - i - 1);
        if (end == std::string::npos ||
            (field != "" && field != "0" && field != "ftype" && field != "outtype" &&
             field != "FTYPE" && field != "OUTTYPE"))
            throw ck::usage_error("--outfile '" + name + "': {" + field +
                                  "} is no template field ({ftype}, {FTYPE}, {outtype}, "
                                  "{OUTTYPE}; {{ for a brace)");
        out += field == "FTYPE" || field == "OUTTYPE" ? upper(outtype) : outtype;
        i = end;
    }
    return out;
}

std::string metadata_text(const ck::Metadata& md, const char* key) {
    const ck::Value* v = md.find(key);
    return v && v->type() == ck::ValueType::string ? v->str() : std::string();
}

// Python's str.strip() of ASCII whitespace, then every `from` replaced by '-'.
std::string name_part(std::string text, const std::string& from) {
    const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
    text.erase(text.begin(), std::find_if_not(text.begin(), text.end(), space));
    text.erase(std::find_if_not(text.rbegin(), text.rend(), space).base(), text.end());
    for (char& c : text)
        if (from.find(c) != std::string::npos) c = '-';
    return text;
}

// gguf-py's naming_convention for an adapter: BASENAME (else NAME: the folder always gives
// one, maybe empty, which then has no key), then -SIZE, -FINETUNE, -VERSION when known, -TYPE
// and -LoRA.
std::string default_file_name(const ck::Metadata& md, const std::string& outtype) {
    std::string name = name_part(md.find("general.basename") ? metadata_text(md, "general.basename")
                                                             : metadata_text(md, "general.name"),
                                 " /");
    for (const char* key : {"general.size_label", "general.finetune", "general.version"})
        if (md.find(key)) name += "-" + name_part(metadata_text(md, key), " ");
    return name + "-" + upper(outtype) + "-LoRA.gguf";
}

// The adapter's metadata, read as the conversion reads it, for the default file name.
ck::Metadata adapter_metadata(const ConvertLoraArgs& l, const StageFlagValues& flags,
                              const Common& c) {
    apply_globals(c);
    PluginRegistry registry(to_paths(c.plugin_dirs));
    std::map<std::string, std::string> options;
    for (const StageFlag& f : adapter_flags)
        if (!flags.value(f.option).empty()) options[f.option] = flags.value(f.option);
    ck::RecordingContext context;  // the conversion reads the adapter again and warns then
    const PluginEntry& hf = registry.get("hf");
    const std::unique_ptr<ck::Reader> reader(call_plugin(
        "hf", [&] { return hf.descriptor->create_reader(ck::Options(options), context); }));
    return call_plugin("hf", [&] { return reader->open(l.adapter); }).metadata;
}

// --outfile as the converter takes it: a folder (the adapter's by default) gets the default
// name, any other path its template fields filled.
std::string output_path(const ConvertLoraArgs& l, const StageFlagValues& flags, const Common& c) {
    const std::string outtype =
        flags.value("outtype").empty() ? std::string("f32") : flags.value("outtype");
    const std::string given = l.outfile.empty() ? l.adapter : l.outfile;
    std::error_code ec;
    if (!fs::is_directory(given, ec)) return fill_template(given, outtype);
    return (fs::path(given) / default_file_name(adapter_metadata(l, flags, c), outtype)).string();
}

void check_lora_arguments(const ConvertLoraArgs& l, const StageFlagValues& flags) {
    if (!l.base_model_id.empty())
        throw ck::usage_error(
            "--base-model-id fetches the base's config.json from the Hugging "
            "Face hub, which ckhost does not: download it and give --base");
    const std::string& outtype = flags.value("outtype");
    if (outtype == "auto")
        throw ck::usage_error(
            "--outtype auto: convert_lora_to_gguf.py fails on it for an "
            "adapter; give f32, f16, bf16 or q8_0");
    if (!outtype.empty() && outtype != "f32" && outtype != "f16" && outtype != "bf16" &&
        outtype != "q8_0")
        throw ck::usage_error("--outtype '" + outtype + "': give f32, f16, bf16 or q8_0");
}

}  // namespace

int convert_lora(const Args& args, OptionList* options_out) {
    Common c;
    ConvertArgs a;
    ConvertLoraArgs l;
    StageFlagValues flags(adapter_flags);
    po::options_description d("convert-lora options (convert_lora_to_gguf.py's)");
    flags.add_to(d);
    d.add_options()("outfile", po::value(&l.outfile)->value_name("OUT"),
                    "the GGUF file (default: NAME-TYPE-LoRA.gguf in the adapter's folder; a "
                    "folder gets that name; {ftype} is the type)")(
        "bigendian", po::bool_switch(&l.bigendian), "write a big-endian GGUF (gguf[endian=big])")(
        "base-model-id", po::value(&l.base_model_id)->value_name("ID"),
        "refused: the base's config.json would come from the Hugging Face hub")(
        "no-lazy", po::bool_switch(&l.ignored), "no effect (ckhost streams tensor by tensor)")(
        "verbose", po::bool_switch(&l.ignored), "no effect")(
        "trust-remote-code", po::bool_switch(&l.ignored), "no effect (no code is run)");
    add_run_options(d, a);
    const std::vector<Argument> arguments = {{"ADAPTER", &l.adapter}};
    if (list_or_parse(args, d, positional_strings(arguments), c, convert_lora_usage, options_out))
        return ok;
    require_arguments(arguments, 1, "convert-lora [options] ADAPTER --base BASE");
    check_lora_arguments(l, flags);
    a.input = l.adapter;
    a.output = output_path(l, flags, c);
    const std::string options = flags.stage_options();
    a.pipeline = (options.empty() ? "hf" : "hf[" + options + "]") + ":gguf" +
                 (l.bigendian ? "[endian=big]" : "");
    return run_conversion(a, c);
}

}  // namespace ckhost::commands
