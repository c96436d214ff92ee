// The gguflite plugin: GGUF-lite (docs/formats/gguf-lite.md), a small language-neutral export
// format, as a reader and a writer. The writer dequantizes any ggml source with the kernel table
// this CPU runs best (chosen once, when the plugin is loaded).
#include "ck/plugin.hpp"
#include "ck/kernels/dequant.hpp"
#include "gguflite_reader.hpp"
#include "gguflite_writer.hpp"

namespace {

using namespace ckplugin::gguflite;

const ck_option_descriptor options[] = {
    {"scheme", CK_STAGE_WRITER, "q4", "q8|q4|f16|f32",
     "dtype of 2-D tensors: Q8_per_channel, Q4_per_group_64, F16 or F32"},
    ck::value_option("schemes", CK_STAGE_WRITER,
                     "JSON file mapping tensor names or globs to q8|q4|f16|f32 (overrides scheme)"),
    {"keep", CK_STAGE_WRITER, "f32", "f32|f16",
     "dtype of tensors that cannot take their scheme (1-D, inner dim not a multiple of 64 "
     "for q4)"},
    ck::switch_option(
        "report", CK_STAGE_WRITER,
        "round-trip check: read the written file back, compare every tensor with the source and "
        "the fake quantization, print the error and size tables on stderr"),
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"gguflite", "1.0.0",
     "GGUF-lite (GLFT): flat little-endian export with text metadata and F32/F16/Q8/Q4 "
     "tensors; the writer quantizes any dequantizable ggml source",
     // `ckhost help gguflite`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:gguflite model.gguf model.gguflite\n"
     "gguf:gguflite[scheme=q8] model.gguf model-q8.gguflite\n"
     "gguflite:gguf model.gguflite back.gguf"},
    options,
    {.probe = looks_like_gguflite,
     .create_reader = ck::reader_factory<GgufLiteReader>,
     .create_writer = ck::writer_factory<GgufLiteWriter>,
     .kernel_variant = ck::kernels::plugin_dequant_variant,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

// Choosing the dequant table when loaded fixes the kernel variant as --isa allows.
CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, ck::kernels::plugin_dequant_table)
