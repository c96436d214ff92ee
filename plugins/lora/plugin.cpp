// The lora plugin: transform `lora[adapter=PATH,scale=S,to=TYPE,export_lora]`
// (lora_transform.hpp), its options and its descriptor.
#include "ck/plugin.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/lora.hpp"
#include "ck/kernels/narrow.hpp"
#include "lora_transform.hpp"

namespace {

const ck_option_descriptor options[] = {
    ck::value_option(
        "adapter", CK_STAGE_TRANSFORM,
        "the LoRA adapter to merge: a GGUF adapter (convert_lora_to_gguf.py's or ckhost "
        "convert-lora's) or a PEFT adapter folder (ckhost converts it first), or "
        "several as {A,B}, merged in that order"),
    ck::value_option("base", CK_STAGE_TRANSFORM,
                     "a PEFT adapter's base model folder (its config.json), when the pipeline's "
                     "input is not that checkpoint read by hf (default: the input, else the "
                     "adapter's base_model_name_or_path)"),
    ck::value_option("scale", CK_STAGE_TRANSFORM,
                     "the adapter's scale (default 1: llama.cpp's --lora), or one each as {1,0.5}; "
                     "the weight gains scale * alpha / r * B A"),
    {"to", CK_STAGE_TRANSFORM, nullptr, "f32|f16|bf16",
     "the merged tensors' type (default: the base's float type; a quantized base's merged "
     "tensors are f32, for the next stage to quantize)"},
    ck::switch_option("export_lora", CK_STAGE_TRANSFORM,
                      "as llama-export-lora writes the merge: merged tensors f16 (f32 stays f32), "
                      "tensors sorted by name, general.file_type last as 1 (MOSTLY_F16)"),
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"lora", "1.0.0",
     "merges GGUF LoRA adapters into the weights they change as the model streams: W + scale * "
     "alpha / r * B A in float32, value for value as llama-export-lora computes it",
     // `ckhost help lora`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:lora[adapter=adapter.gguf,export_lora]:gguf model-f16.gguf merged-f16.gguf\n"
     "hf:lora[adapter=adapter.gguf]:quantize[mix=q4_k_m]:gguf checkpoint/ merged-q4_k_m.gguf\n"
     "gguf:lora[adapter={a.gguf,b.gguf},scale={1,0.5}]:gguf model.gguf merged.gguf\n"
     "hf:lora[adapter=my-adapter/]:quantize[mix=q4_k_m]:gguf checkpoint/ merged-q4_k_m.gguf"},
    options,
    {.create_transform = ck::transform_factory<ckplugin::lora::Lora>,
     .kernel_variant = ck::kernels::plugin_dequant_variant,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

// Choose the kernel tables when loaded: the variants follow --isa.
void choose_kernels() {
    ck::kernels::plugin_dequant_table();
    ck::kernels::plugin_narrow_table();
    ck::kernels::plugin_lora_table();
}

}  // namespace

CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, choose_kernels)
