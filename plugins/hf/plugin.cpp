// The hf plugin: a Hugging Face checkpoint folder in, as llama.cpp's convert_hf_to_gguf.py
// would have converted it (README.md), so `hf:gguf` needs no Python and no GGUF in between on
// the way to bump.
#include "ck/plugin.hpp"
#include "hf_reader.hpp"

namespace hf = ckplugin::hf;

// A namespace-scope const: internal linkage, only CK_PLUGIN_ENTRY's function is exported.
const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"hf", "1.0.0",
     "Hugging Face checkpoint folder (config.json, safetensors shards, tokenizer.model or "
     "tokenizer.json) with "
     "llama.cpp's tensor names, row order and metadata; llama, mistral, qwen2",
     // `ckhost help hf`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "hf:gguf checkpoint/ model-bf16.gguf\n"
     "hf:quantize[mix=q4_k_m]:gguf checkpoint/ model-q4_k_m.gguf"},
    {.probe = hf::looks_like_checkpoint,
     .create_reader = ck::reader_factory<hf::HfReader>,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

CK_PLUGIN_ENTRY(descriptor)
