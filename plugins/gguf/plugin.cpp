// The gguf plugin: llama.cpp's / ggml's container, as a reader and a writer.
#include "ck/plugin.hpp"

#include "gguf_reader.hpp"
#include "gguf_split_writer.hpp"

namespace {

using namespace ckplugin::gguf;

const ck_option_descriptor options[] = {
    ck::value_option(
        "split_max_size", CK_STAGE_WRITER,
        "write a llama.cpp split set, shards of at most N M or N G bytes of tensor data (M = "
        "1000^2, G = 1000^3), as llama-gguf-split --split-max-size"),
    ck::value_option(
        "split_max_tensors", CK_STAGE_WRITER,
        "write a llama.cpp split set, shards of at most N tensors, as llama-gguf-split "
        "--split-max-tensors"),
    ck::switch_option("split_no_tensor_first", CK_STAGE_WRITER,
                      "split set whose first shard holds metadata only, as llama-gguf-split "
                      "--no-tensor-first-split (alone: 128 tensors per shard)"),
    {"endian", CK_STAGE_WRITER, "little", "little|big",
     "byte order of the file written: big gives what gguf_convert_endian.py makes for s390x"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"gguf", "1.0.0",
     "GGUF v2/v3 (llama.cpp, ggml): memory-mapped reader with full validation; writer in ggml's "
     "exact layout, or a llama.cpp split set"},
    options,
    {.probe = looks_like_gguf,
     .create_reader = ck::reader_factory<GgufReader>,
     .create_writer = create_gguf_writer,
     .flags = CK_PLUGIN_FLAG_CONCURRENT | CK_PLUGIN_FLAG_STREAMS});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
