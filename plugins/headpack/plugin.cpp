// The headpack plugin: pads attention heads for C-Kernel-Engine's aligned head layout.
#include "ck/plugin.hpp"
#include "headpack.hpp"

namespace {

const ck_option_descriptor options[] = {
    {"align", CK_STAGE_TRANSFORM, "64", nullptr,
     "byte alignment of each FP32 head: hd_a = align_up(hd * 4, align) / 4 (multiple of 4)"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"headpack", "1.0.0",
     "pads each attention head of attn_q/k/v (and biases) with zero rows to an aligned head "
     "size",
     // `ckhost help headpack`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:headpack:bump model.gguf out/\n"
     "gguf:headpack[align=128]:bump model.gguf out/"},
    options,
    {.create_transform = ck::transform_factory<ckplugin::headpack::Headpack>,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
