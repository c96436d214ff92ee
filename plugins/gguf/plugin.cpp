// The gguf plugin: llama.cpp's / ggml's container, as a reader and a writer.
#include "ck/plugin.hpp"

#include "gguf_reader.hpp"
#include "gguf_writer.hpp"

namespace {

using namespace ckplugin::gguf;

const ck_option_descriptor options[] = {
    {"endian", CK_STAGE_WRITER, "little", "little|big",
     "byte order of the file written: big gives what gguf_convert_endian.py makes for s390x"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"gguf", "1.0.0",
     "GGUF v2/v3 (llama.cpp, ggml): memory-mapped reader with full validation; writer in ggml's "
     "exact layout"},
    options,
    {.probe = looks_like_gguf,
     .create_reader = ck::reader_factory<GgufReader>,
     .create_writer = ck::writer_factory<GgufWriter>,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
