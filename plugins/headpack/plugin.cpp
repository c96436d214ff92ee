// The headpack plugin: pads attention heads for C-Kernel-Engine's aligned head layout.
#include "ck/plugin.hpp"
#include "headpack.hpp"

namespace {

ck::Transform* create_transform(const ck::Options& options, ck::Context&) {
    return new ckplugin::headpack::Headpack(options);
}

const ck_option_descriptor options[] = {
    {"align", CK_STAGE_TRANSFORM, "64", nullptr,
     "byte alignment of each FP32 head: hd_a = align_up(hd * 4, align) / 4 (multiple of 4)"},
};

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_DESCRIPTOR_HEAD(0),  // flags 0: not declared safe for concurrent calls
    CK_STAGE_TRANSFORM,
    "headpack",
    "1.0.0",
    "pads each attention head of attn_q/k/v (and biases) with zero rows to an aligned head size",
    options,
    sizeof options / sizeof options[0],
    nullptr,
    nullptr,
    create_transform,
    nullptr,
    nullptr,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
