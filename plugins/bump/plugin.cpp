// The bump plugin: C-Kernel-Engine's bump v3 weight file (`BUMPWGT3`) with its config.json, and
// with version=4 its bump v4 file (`BUMPWGT4`) with the manifest, map and config.json, as a
// writer (byte-identical to the reference converters, with the fixes listed in README.md) and a
// reader (inspect, verify).
#include "ck/plugin.hpp"
#include "bump_format.hpp"
#include "bump_reader.hpp"
#include "bump_v4_writer.hpp"
#include "bump_writer.hpp"
#include "ck/error.hpp"
#include "ck/kernels/dequant.hpp"

namespace {

using namespace ckplugin::bump;

// v3 stays the default: today's pipelines and goldens keep their meaning.
ck::Writer* create_writer(const ck::Options& options, ck::Context& context) {
    const std::string version = options.get("version", "3");
    if (version == "3") return ck::writer_factory<BumpWriter>(options, context);
    if (version == "4") return ck::writer_factory<BumpV4Writer>(options, context);
    throw ck::usage_error("option version=" + version + ": expected 3 or 4");
}

const ck_option_descriptor options[] = {
    {"version", CK_STAGE_WRITER, "3", "3|4",
     "bump format version: 3 (BUMPWGT3 + config.json) or 4 (BUMPWGT4 + manifest, map, config)"},
    {"context", CK_STAGE_WRITER, nullptr, nullptr,
     "context length N for the header and config.json (overrides <arch>.context_length)"},
    {"context_ok", CK_STAGE_WRITER, "0", nullptr,
     "write a context=N whose zero position embeddings outweigh the rest of the file"},
    {"strict", CK_STAGE_WRITER, "0", nullptr,
     "refuse an untied output.weight instead of dropping it with a warning"},
    {"config", CK_STAGE_WRITER, nullptr, nullptr,
     "where to write config.json (default: beside the bump file)"},
    {"manifest", CK_STAGE_WRITER, nullptr, nullptr,
     "version=4: where to write weights_manifest.json (default: beside the bump file)"},
    {"map", CK_STAGE_WRITER, nullptr, nullptr,
     "version=4: where to write weights_map.json (default: beside the bump file)"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"bump", "1.0.0",
     "C-Kernel-Engine bump v3 weights (BUMPWGT3) + config.json, or with version=4 bump v4 "
     "(BUMPWGT4) + manifest, map and config.json: writers byte-identical to the reference "
     "converters, reader with SHA-256 verify"},
    options,
    {.probe = has_magic,
     .create_reader = ck::reader_factory<BumpReader>,
     .create_writer = create_writer,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

// v4 dequantizes: choose the kernel variant when loaded.
void load() {
    ck::kernels::plugin_dequant_table();
}

}  // namespace

CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, load)
