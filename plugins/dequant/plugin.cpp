// The dequant plugin: transform `dequant[to=f32|f16|bf16,only=GLOB,skip=GLOB]`
// (dequant_transform.hpp), its options and its descriptor.
#include "ck/plugin.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/stage.hpp"
#include "ck/tensor_filter.hpp"
#include "dequant_transform.hpp"

namespace {

using ckplugin::dequant::Dequant;

const ck_option_descriptor options[] = {
    {"to", CK_STAGE_TRANSFORM, "f32", "f32|f16|bf16", "target float type"},
    ck::TensorFilter::only_option(CK_STAGE_TRANSFORM),
    ck::TensorFilter::skip_option(CK_STAGE_TRANSFORM),
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"dequant", "1.0.0",
     "dequantize tensors to f32, f16 or bf16 (bit-identical to ggml's to_float)",
     // `ckhost help dequant`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:dequant[to=f16]:gguf model-q4_k_m.gguf model-f16.gguf\n"
     "gguf:dequant:headpack:bump model-q4_k_m.gguf out-f32/"},
    options,
    {.create_transform = ck::transform_factory<Dequant>,
     .kernel_variant = ck::kernels::plugin_dequant_variant,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

// Choosing the kernel tables when loaded fixes the kernel variant as --isa allows (both tables
// take the same: the best this CPU runs within it).
void choose_kernels() {
    ck::kernels::plugin_dequant_table();
    ck::kernels::plugin_narrow_table();
}

}  // namespace

CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, choose_kernels)
