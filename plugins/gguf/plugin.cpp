// The gguf plugin: llama.cpp's / ggml's container, as a reader and a writer.
#include "ck/plugin.hpp"

#include "gguf_reader.hpp"
#include "gguf_split_writer.hpp"

namespace {

using namespace ckplugin::gguf;

const ck_option_descriptor options[] = {
    ck::value_option(
        "split_max_size", CK_STAGE_WRITER,
        "write a llama.cpp split set, shards of at most this much tensor data: N bytes, or NM, "
        "NG as llama-gguf-split --split-max-size reads them (1000^2, 1000^3), or NMB, NGiB, ..."),
    ck::value_option(
        "split_max_tensors", CK_STAGE_WRITER,
        "write a llama.cpp split set, shards of at most N tensors, as llama-gguf-split "
        "--split-max-tensors"),
    ck::switch_option("split_no_tensor_first", CK_STAGE_WRITER,
                      "split set whose first shard holds metadata only, as llama-gguf-split "
                      "--no-tensor-first-split (alone: 128 tensors per shard)"),
    ck::value_option(
        "split_counts", CK_STAGE_WRITER,
        "write a llama.cpp split set of these tensor counts, space-separated, in order, summing "
        "to the model's, with llama-quantize --keep-split's split keys (none for one count)"),
    {"endian", CK_STAGE_WRITER, "little", "little|big",
     "byte order of the file written: big gives what gguf_convert_endian.py makes for s390x"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"gguf", "1.0.0",
     "GGUF v2/v3 (llama.cpp, ggml): memory-mapped reader with full validation; writer in ggml's "
     "exact layout, or a llama.cpp split set",
     // `ckhost help gguf`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:gguf model.gguf copy.gguf\n"
     "gguf:gguf[split_max_size=2G] model.gguf shards/model.gguf"},
    options,
    {.probe = looks_like_gguf,
     .create_reader = ck::reader_factory<GgufReader>,
     .create_writer = create_gguf_writer,
     .flags = CK_PLUGIN_FLAG_CONCURRENT | CK_PLUGIN_FLAG_STREAMS});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
