// The safetensors plugin: Hugging Face's container, as a reader and a writer. It is also where
// repacked weights go (web-rwkv loads safetensors): X plus X.minmax or X.absmax, with their
// format recorded in __metadata__.
#include "ck/plugin.hpp"
#include "safetensors_reader.hpp"
#include "safetensors_writer.hpp"

namespace {

bool probe(const unsigned char* head, std::size_t size, const char* path) {
    return ckplugin::safetensors::looks_like_safetensors(head, size, path);
}

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_DESCRIPTOR_HEAD(0),  // flags 0: not declared safe for concurrent calls
    CK_STAGE_READER | CK_STAGE_WRITER,
    "safetensors",
    "1.0.0",
    "safetensors (Hugging Face): fully validated memory-mapped reader; writer with GGUF "
    "metadata and repacked Int8/NF4 pairs in __metadata__",
    nullptr,
    0,
    probe,
    [](const ck::Options&, ck::Context& c) -> ck::Reader* {
        return new ckplugin::safetensors::SafetensorsReader(c);
    },
    nullptr,
    [](const ck::Options&, ck::Context& c) -> ck::Writer* {
        return new ckplugin::safetensors::SafetensorsWriter(c);
    },
    nullptr,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
