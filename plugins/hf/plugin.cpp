// The hf plugin: a Hugging Face checkpoint folder in, as llama.cpp's convert_hf_to_gguf.py
// would have converted it (README.md), so `hf:gguf` needs no Python and no GGUF in between on
// the way to bump; and the way back, a GGUF model out as a checkpoint folder (the writer).
#include "ck/plugin.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/narrow.hpp"
#include "hf_reader.hpp"
#include "hf_writer.hpp"

namespace hf = ckplugin::hf;

namespace {

const ck_option_descriptor options[] = {
    ck::value_option("base", CK_STAGE_READER,
                     "for a PEFT LoRA adapter folder: the base model's folder (or its "
                     "config.json), which gives the architecture (convert_lora_to_gguf.py --base)"),
    {"outtype", CK_STAGE_READER, "f32", "f32|f16|bf16|q8_0",
     "for a PEFT LoRA adapter folder: the adapter's tensor type, as convert_lora_to_gguf.py "
     "--outtype writes it (q8_0 where rows are a multiple of 32, else f16)"},
    ck::switch_option("peft_scale", CK_STAGE_READER,
                      "for a PEFT LoRA adapter folder with use_rslora: write adapter.lora.alpha "
                      "= lora_alpha * sqrt(r), so that llama.cpp scales it as PEFT does (the "
                      "converter writes lora_alpha, which llama.cpp divides by r)"),
    {"dtype", CK_STAGE_WRITER, nullptr, "bf16|f16|f32",
     "the weights' type (default: the source's float type from general.file_type; BF16 for a "
     "quantized or mixed source, whose tensors are dequantized)"},
    {"max_shard_size", CK_STAGE_WRITER, "5GB", nullptr,
     "shard the weights as save_pretrained does: a new model-0000K-of-0000N.safetensors when the "
     "next tensor would pass this much (5GB = 5*10^9 bytes, 500MB, 2GiB = 2*2^30, or bytes)"},
    ck::value_option("class", CK_STAGE_WRITER,
                     "the Hugging Face class to write within the model's family, e.g. "
                     "MistralForCausalLM for a llama GGUF (default: chosen from the metadata)"),
};

// The writer dequantizes: choosing both kernel tables when loaded fixes the variant as --isa
// allows.
void choose_kernels() {
    ck::kernels::plugin_dequant_table();
    ck::kernels::plugin_narrow_table();
}

}  // namespace

// A namespace-scope const: internal linkage, only CK_PLUGIN_ENTRY's function is exported.
const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"hf", "1.0.0",
     "Hugging Face checkpoint folder (config.json, safetensors shards, tokenizer.model or "
     "tokenizer.json) with "
     "llama.cpp's tensor names, row order and metadata; the writer is its exact inverse, a "
     "GGUF back to a checkpoint transformers loads; llama, mistral, mixtral, qwen2/3, qwen3moe, "
     "gemma2/3, phi3; a PEFT LoRA adapter folder as convert_lora_to_gguf.py converts it",
     // `ckhost help hf`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "hf:gguf checkpoint/ model-bf16.gguf\n"
     "hf:quantize[mix=q4_k_m]:gguf checkpoint/ model-q4_k_m.gguf\n"
     "gguf:hf model.gguf checkpoint/\n"
     "gguf:hf[dtype=f16] model.gguf checkpoint-f16/"},
    options,
    {.probe = hf::looks_like_checkpoint,
     .create_reader = ck::reader_factory<hf::HfReader>,
     .create_writer = ck::writer_factory<hf::HfWriter>,
     .kernel_variant = ck::kernels::plugin_dequant_variant,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, choose_kernels)
