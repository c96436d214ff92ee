// The meta plugin: `meta[set=KEY=TYPE:VALUE, set_file=KEY=PATH, del=GLOB, rename=OLD=NEW,
// rename_tensors=PATTERN=REPLACEMENT, special_token=NAME:TEXT]` edits metadata and tensor names
// in any pipeline; tensor bytes pass through (docs/metadata-editing.md).
#include "ck/plugin.hpp"
#include "meta_edit.hpp"

namespace {

const ck_option_descriptor options[] = {
    ck::value_option(
        "set", CK_STAGE_TRANSFORM,
        "KEY=TYPE:VALUE: give a key a value of an explicit type (u8 i8 u16 i16 u32 i32 u64 i64 f32 "
        "f64 bool str, or arr:TYPE:V V V); KEY=VALUE for a key whose type llama.cpp fixes or the "
        "input has"),
    ck::value_option("set_file", CK_STAGE_TRANSFORM,
                     "KEY=PATH: give a key the text of a UTF-8 file as a str (a chat template)"),
    ck::value_option("del", CK_STAGE_TRANSFORM,
                     "KEY or GLOB: delete the keys it matches (fnmatch; at least one)"),
    ck::value_option("rename", CK_STAGE_TRANSFORM,
                     "OLD=NEW: rename a key, keeping its position and value"),
    ck::value_option(
        "rename_tensors", CK_STAGE_TRANSFORM,
        "PATTERN=REPLACEMENT: rename tensors by an ECMAScript regular expression ($1 in the "
        "replacement), every match replaced"),
    ck::value_option(
        "special_token", CK_STAGE_TRANSFORM,
        "NAME:TEXT: set tokenizer.ggml.NAME_token_id to the id of token TEXT (eos:<|im_end|>)"),
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"meta", "1.0.0",
     "edits metadata (set, set_file, del, rename) and renames tensors; tensor bytes pass "
     "through",
     // `ckhost help meta`'s examples, one "PIPELINE INPUT OUTPUT" a line
     "gguf:meta[set=general.name=str:My Model]:gguf model.gguf named.gguf\n"
     "gguf:quantize[mix=q4_k_m]:meta[set=general.name=str:My Model Q4_K_M]:gguf model-f16.gguf "
     "model-q4_k_m.gguf"},
    options,
    {.create_transform = ck::transform_factory<ckplugin::meta::Meta>,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
