#include "cli/command_table.hpp"

namespace ckhost::cli {

const std::vector<Command>& command_table() {
    static const std::vector<Command> table = {
        {"convert", "convert --pipeline PIPELINE INPUT OUTPUT [options]", commands::convert},
        {"quantize", "quantize [options] INPUT OUTPUT TYPE [THREADS]", commands::quantize},
        {"split", "split [--split-max-tensors N | --split-max-size N(M|G)] INPUT OUTPUT_PREFIX",
         commands::split},
        {"merge", "merge FIRST_SHARD OUTPUT", commands::merge},
        {"convert-lora", "convert-lora ADAPTER --base BASE [--outtype TYPE] [--outfile OUT]",
         commands::convert_lora},
        {"export-lora", "export-lora -m BASE --lora A[,B] [--lora-scaled C:S] [-o OUT]",
         commands::export_lora},
        {"inspect", "inspect FILE... [--json] [--tensors] [--kv KEY]...", commands::inspect},
        {"verify", "verify FILE... [--data] [--json]", commands::verify},
        {"compare", "compare A B [B...] [--report FILE.html] [--imatrix FILE] [--top N]",
         commands::compare},
        {"plugins", "plugins [--json]", commands::plugins},
        {"batch", "batch JOBS [--jobs N] [--json] [--force] [--shard K/N|auto]", commands::batch},
        {"batch-report", "batch-report DIR [--resubmit FILE] [--json]", commands::batch_report},
        {"completion", "completion bash|zsh", commands::completion},
    };
    return table;
}

std::vector<std::string> command_names() {
    std::vector<std::string> names;
    for (const Command& command : command_table()) names.emplace_back(command.name);
    names.emplace_back("help");
    return names;
}

// The common goals come first: a newcomer looks for what to type, then for the synopsis.
std::string main_usage() {
    std::string text =
        "ckhost converts model weight files between formats (GGUF, safetensors, Hugging Face\n"
        "checkpoints, bump), one tensor at a time.\n"
        "\n"
        "common goals:\n"
        "  quantize a GGUF as llama-quantize does:\n"
        "    ckhost quantize model-f16.gguf model-q4_k_m.gguf Q4_K_M\n"
        "  a Hugging Face checkpoint to GGUF, as convert_hf_to_gguf.py does:\n"
        "    ckhost --pipeline hf:gguf -i checkpoint/ -o model.gguf\n"
        "  a GGUF to bump weights for C-Kernel-Engine:\n"
        "    ckhost --pipeline gguf:headpack:bump -i model.gguf -o out/\n"
        "  a PEFT LoRA adapter to GGUF, and merged into a model, as llama.cpp's tools do:\n"
        "    ckhost convert-lora my-adapter --base checkpoint/ --outfile adapter.gguf\n"
        "    ckhost export-lora -m model-f16.gguf --lora adapter.gguf -o merged-f16.gguf\n"
        "  split a GGUF into llama.cpp shards, and merge them again:\n"
        "    ckhost split --split-max-size 2G model.gguf shards/model\n"
        "    ckhost merge shards/model-00001-of-00003.gguf model.gguf\n"
        "  look inside a file; check every value in it:\n"
        "    ckhost inspect model.gguf         ckhost verify --data model.gguf\n"
        "  how much a quant changed each tensor, in figures and in a picture:\n"
        "    ckhost compare model-f16.gguf model-q4_k_m.gguf --report q4_k_m.html\n"
        "  edit metadata:\n"
        "    ckhost --pipeline 'gguf:meta[set=general.name=str:My Model]:gguf' -i m.gguf -o "
        "new.gguf\n"
        "  what a stage does and takes (ckhost plugins lists them all):\n"
        "    ckhost help quantize              ckhost help bump\n"
        "\n"
        "usage: ckhost --pipeline READER[:TRANSFORM...]:WRITER -i INPUT -o OUTPUT [options]\n";
    for (const Command& command : command_table())
        text += "       ckhost " + std::string(command.synopsis) + "\n";
    text += "       ckhost help [COMMAND]     (or ckhost COMMAND --help: that command's options)\n";
    text += "       ckhost help STAGE         (a stage's options, choices and examples)\n";
    return text +
           "\n"
           "more examples:\n"
           "  ckhost --pipeline gguf:gguf -i model.gguf -o copy.gguf\n"
           "  ckhost convert --pipeline gguf:gguf model.gguf out/ --dry-run\n"
           "  ckhost inspect model.gguf --tensors\n"
           "  ckhost inspect model.gguf --kv tokenizer.ggml.tokens\n"
           "  ckhost plugins --json\n"
           "  ckhost batch jobs.txt --jobs 2      (jobs.txt: one 'PIPELINE INPUT OUTPUT' per "
           "line)\n"
           "\n"
           "Global options, before or after the command: --plugin-dir DIR (repeatable), --isa X,\n"
           "--threads N, --max-memory SIZE, --no-sync, --quiet/-q, --json (e.g. ckhost "
           "--plugin-dir\n"
           "build plugins, ckhost --json inspect F).\n"
           "-i - reads standard input; -o - writes standard output (writers that stream: gguf,\n"
           "safetensors).\n"
           "Stage options go in brackets, so quote the pipeline: "
           "'gguf:repack[to=nf4,only=blk.*]:safetensors'.\n"
           "Exit codes: 0 success, 1 input or conversion failed, 2 usage error, 3 plugin could not "
           "be\n"
           "loaded, 130 interrupted.\n";
}

}  // namespace ckhost::cli
