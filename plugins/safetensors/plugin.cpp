// The safetensors plugin: Hugging Face's container, as a reader and a writer. It is also where
// repacked weights go (web-rwkv loads safetensors): X plus X.minmax or X.absmax, with their
// format recorded in __metadata__.
#include "ck/plugin.hpp"
#include "safetensors_reader.hpp"
#include "safetensors_writer.hpp"

namespace {

using namespace ckplugin::safetensors;

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"safetensors", "1.0.0",
     "safetensors (Hugging Face): fully validated memory-mapped reader; writer with GGUF "
     "metadata and repacked Int8/NF4 pairs in __metadata__"},
    {.probe = looks_like_safetensors,
     .create_reader = ck::reader_factory<SafetensorsReader>,
     .create_writer = ck::writer_factory<SafetensorsWriter>});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
