// The gguf plugin: llama.cpp's / ggml's container, as a reader and a writer.
#include "ck/plugin.hpp"

#include "gguf_reader.hpp"
#include "gguf_writer.hpp"

namespace {

bool probe(const unsigned char* head, std::size_t size, const char*) {
    return ckplugin::gguf::looks_like_gguf(head, size);
}

ck::Reader* create_reader(const ck::Options&, ck::Context& context) {
    return new ckplugin::gguf::GgufReader(context);
}

ck::Writer* create_writer(const ck::Options&, ck::Context& context) {
    return new ckplugin::gguf::GgufWriter(context);
}

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_DESCRIPTOR_HEAD(0),  // flags 0: not declared safe for concurrent calls
    CK_STAGE_READER | CK_STAGE_WRITER,
    "gguf",
    "1.0.0",
    "GGUF v2/v3 (llama.cpp, ggml): memory-mapped reader with full validation; writer in ggml's "
    "exact layout",
    nullptr,
    0,
    probe,
    create_reader,
    nullptr,
    create_writer,
    nullptr,
};

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    return &descriptor;
}
