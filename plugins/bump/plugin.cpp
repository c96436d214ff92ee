// The bump plugin: C-Kernel-Engine's bump v3 weight file (`BUMPWGT3`) with its config.json, as a
// writer (byte-identical to the reference converter, with the fixes listed in README.md) and a
// reader (inspect, verify).
#include "ck/plugin.hpp"
#include "bump_format.hpp"
#include "bump_reader.hpp"
#include "bump_writer.hpp"

namespace {

using namespace ckplugin::bump;

const ck_option_descriptor options[] = {
    {"context", CK_STAGE_WRITER, nullptr, nullptr,
     "context length N for the header and config.json (overrides <arch>.context_length)"},
    {"context_ok", CK_STAGE_WRITER, "0", nullptr,
     "write a context=N whose zero position embeddings outweigh the rest of the file"},
    {"strict", CK_STAGE_WRITER, "0", nullptr,
     "refuse an untied output.weight instead of dropping it with a warning"},
    {"config", CK_STAGE_WRITER, nullptr, nullptr,
     "where to write config.json (default: beside the bump file)"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"bump", "1.0.0",
     "C-Kernel-Engine bump v3 weights (BUMPWGT3) + config.json: writer byte-identical to "
     "convert_gguf_to_bump.py, reader with SHA-256 verify"},
    options,
    {.probe = has_magic,
     .create_reader = ck::reader_factory<BumpReader>,
     .create_writer = ck::writer_factory<BumpWriter>,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
