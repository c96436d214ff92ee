// The npy plugin's descriptor: the one symbol ckhost looks up. ck::describe_plugin fills the
// fields ckhost checks before anything else (ABI version, struct size, flags, toolchain) as this
// file is compiled; ckhost skips the library when they do not match the ckhost it runs in.
#include "ck/plugin.hpp"
#include "npy_writer.hpp"

namespace {

const ck_option_descriptor options[] = {
    {"dtype", CK_STAGE_WRITER, "f32", "f32|f16",
     "float type of dequantized tensors (integer and f64 tensors keep their own)"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"npy",  // must equal the file name, npy.so
     "1.0.0",
     "NumPy: one .npy per tensor (dequantized to f32 or f16) and an index.json of names, shapes "
     "and source types"},
    options,
    {.create_writer = ck::writer_factory<npy::NpyWriter>,
     .kernel_variant = ck::kernels::plugin_dequant_variant});

// Choose the kernel variant when loaded.
void load() {
    ck::kernels::plugin_dequant_table();
}

}  // namespace

// The exported ckhost_plugin_descriptor(): calls load(), returns the descriptor.
CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, load)
