// The bump plugin: C-Kernel-Engine's bump v3 weight file (`BUMPWGT3`) with its config.json, and
// with version=4 its bump v4 file (`BUMPWGT4`) with the manifest, map and config.json, as a
// writer (byte-identical to the reference converters, with the fixes listed in docs/bump-output.md)
// and a reader (inspect, verify). Which version's reader or writer runs is decided in
// bump_versions.cpp.
#include "ck/plugin.hpp"
#include "bump_versions.hpp"
#include "ck/kernels/dequant.hpp"

namespace {

using namespace ckplugin::bump;

const ck_option_descriptor options[] = {
    {"version", CK_STAGE_WRITER, "3", "3|4",
     "bump format version: 3 (BUMPWGT3 + config.json) or 4 (BUMPWGT4 + manifest, map, config)"},
    ck::value_option(
        "context", CK_STAGE_WRITER,
        "context length N for the header and config.json (overrides <arch>.context_length)"),
    ck::switch_option("context_ok", CK_STAGE_WRITER,
                      "write a context=N whose zero position embeddings outweigh the rest of the "
                      "file"),
    ck::switch_option("strict", CK_STAGE_WRITER,
                      "refuse an untied output.weight instead of dropping it with a warning"),
    ck::value_option("config", CK_STAGE_WRITER,
                     "where to write config.json (default: beside the bump file)"),
    ck::value_option(
        "manifest", CK_STAGE_WRITER,
        "version=4: where to write weights_manifest.json (default: beside the bump file)"),
    ck::value_option("map", CK_STAGE_WRITER,
                     "version=4: where to write weights_map.json (default: beside the bump file)"),
    {"weights_path", CK_STAGE_WRITER, "given", "given|relative",
     "version=4: the manifest's weights_path: the bump path as given with -o (the reference's "
     "form) or relative to the manifest's folder (the folder can then be moved)"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"bump", "1.0.0",
     "C-Kernel-Engine bump v3 weights (BUMPWGT3) + config.json, or with version=4 bump v4 "
     "(BUMPWGT4) + manifest, map and config.json: writers byte-identical to the reference "
     "converters, reader with SHA-256 verify",
     // `ckhost help bump`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:headpack:bump model.gguf out/\n"
     "gguf:headpack:bump[version=4] model.gguf out4/\n"
     "bump:gguf out/weights.bump model.gguf"},
    options,
    {.probe = has_magic,
     .create_reader = ck::reader_factory<BumpReader>,
     .create_writer = create_writer,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

// v4 dequantizes: choosing the dequant table when loaded fixes the kernel variant as --isa
// allows.
CK_PLUGIN_ENTRY_WITH_LOAD(descriptor, ck::kernels::plugin_dequant_table)
