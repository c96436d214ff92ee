// The repack plugin: transform `repack[to=int8|nf4,only=GLOB,skip=GLOB]` turns GGUF blocks
// (Q8_0, Q4_0, Q4_K/Q5_K/Q6_K) and plain floats into web-rwkv's Int8 and NF4 layouts, with the
// kernel table this CPU runs best (chosen once, when the plugin is loaded).
#include "ck/plugin.hpp"
#include "ck/kernels/repack.hpp"
#include "ck/tensor_filter.hpp"
#include "repack_transform.hpp"

namespace {

const ck_option_descriptor options[] = {
    {"to", CK_STAGE_TRANSFORM, "int8", "int8|nf4",
     "target layout: int8 (u8 codes, f16 min/max per 128) or nf4 (4-bit NormalFloat, f16 "
     "absmax per 64)"},
    ck::TensorFilter::only_option(CK_STAGE_TRANSFORM),
    ck::TensorFilter::skip_option(CK_STAGE_TRANSFORM),
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"repack", "1.0.0",
     "repack Q8_0/Q4_K/Q5_K/Q6_K/float weights to web-rwkv Int8 and Q4_0/float weights to NF4, "
     "block by block, with an accuracy report",
     // `ckhost help repack`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:repack[to=int8]:safetensors model-q8_0.gguf out/\n"
     "gguf:repack[to=nf4]:safetensors model-q4_0.gguf out/"},
    options,
    {.create_transform = ck::transform_factory<ckplugin::repack::RepackTransform>,
     .kernel_variant = ck::kernels::plugin_repack_variant,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

// Choosing the repack table when loaded fixes the kernel variant as --isa allows.
CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, ck::kernels::plugin_repack_table)
