// The safetensors plugin: Hugging Face's container, as a reader and a writer. It is also where
// repacked weights go (web-rwkv loads safetensors): X plus X.minmax or X.absmax, with their
// format recorded in __metadata__.
#include "ck/plugin.hpp"
#include "ck/safetensors/reader.hpp"
#include "safetensors_writer.hpp"

namespace st = ckplugin::safetensors;
namespace container = ck::safetensors;

// A namespace-scope const: internal linkage, only CK_PLUGIN_ENTRY's function is exported.
const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"safetensors", "1.0.0",
     "safetensors (Hugging Face): fully validated memory-mapped reader; writer with GGUF "
     "metadata and repacked Int8/NF4 pairs in __metadata__",
     // `ckhost help safetensors`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:safetensors model-f16.gguf model.safetensors\n"
     "safetensors:gguf model.safetensors model.gguf"},
    {.probe = container::looks_like_safetensors,
     .create_reader = ck::reader_factory<container::SafetensorsReader>,
     .create_writer = ck::writer_factory<st::SafetensorsWriter>,
     .flags = CK_PLUGIN_FLAG_CONCURRENT | CK_PLUGIN_FLAG_STREAMS});

CK_PLUGIN_ENTRY(descriptor)
