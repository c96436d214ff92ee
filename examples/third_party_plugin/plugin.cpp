// The npy plugin's descriptor: the one symbol ckhost looks up. ckhost reads `abi_version`
// first and skips the library when it differs from the SDK it was built with.
#include "ck/plugin.hpp"
#include "npy_writer.hpp"

namespace {

const ck_option_descriptor options[] = {
    {"dtype", CK_STAGE_WRITER, "f32", "f32|f16",
     "float type of dequantized tensors (integer and f64 tensors keep their own)"},
};

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_ABI_VERSION,
    CK_STAGE_WRITER,
    "npy",  // must equal the file name, npy.so
    "1.0.0",
    "NumPy: one .npy per tensor (dequantized to f32 or f16) and an index.json of names, shapes "
    "and source types",
    options,
    sizeof options / sizeof options[0],
    nullptr,  // probe: readers only
    nullptr,
    nullptr,
    [](const ck::Options& o, ck::Context& c) -> ck::Writer* { return new npy::NpyWriter(o, c); },
    ck::kernels::plugin_dequant_variant,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    ck::kernels::plugin_dequant_table();  // choose the kernel variant when loaded
    return &descriptor;
}
