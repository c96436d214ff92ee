// The bump plugin: C-Kernel-Engine's bump v3 weight file (`BUMPWGT3`) with its config.json, as a
// writer (byte-identical to the reference converter, with the fixes listed in README.md) and a
// reader (inspect, verify).
#include "ck/plugin.hpp"
#include "bump_format.hpp"
#include "bump_reader.hpp"
#include "bump_writer.hpp"

namespace {

bool probe(const unsigned char* head, std::size_t size, const char*) {
    return ckplugin::bump::has_magic(head, size);
}

ck::Reader* create_reader(const ck::Options&, ck::Context& context) {
    return new ckplugin::bump::BumpReader(context);
}

ck::Writer* create_writer(const ck::Options& options, ck::Context& context) {
    return new ckplugin::bump::BumpWriter(options, context);
}

const ck_option_descriptor options[] = {
    {"context", CK_STAGE_WRITER, nullptr, nullptr,
     "context length N for the header and config.json (overrides <arch>.context_length)"},
    {"strict", CK_STAGE_WRITER, "0", nullptr,
     "refuse an untied output.weight instead of dropping it with a warning"},
    {"config", CK_STAGE_WRITER, nullptr, nullptr,
     "where to write config.json (default: beside the bump file)"},
};

const ck_plugin_descriptor descriptor = {
    CK_PLUGIN_DESCRIPTOR_HEAD(0),  // flags 0: not declared safe for concurrent calls
    CK_STAGE_READER | CK_STAGE_WRITER,
    "bump",
    "1.0.0",
    "C-Kernel-Engine bump v3 weights (BUMPWGT3) + config.json: writer byte-identical to "
    "convert_gguf_to_bump.py, reader with SHA-256 verify",
    options,
    sizeof options / sizeof options[0],
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
