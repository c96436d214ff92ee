// The meta plugin: `meta[set=KEY=TYPE:VALUE, set_file=KEY=PATH, del=GLOB, rename=OLD=NEW,
// rename_tensors=PATTERN=REPLACEMENT, special_token=NAME:TEXT]` edits metadata and tensor names
// in any pipeline; tensor bytes pass through (docs/metadata-editing.md).
#include "ck/plugin.hpp"
#include "meta_edit.hpp"

namespace {

const ck_option_descriptor options[] = {
    {"set", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "KEY=TYPE:VALUE: give a key a value of an explicit type (u8 i8 u16 i16 u32 i32 u64 i64 f32 "
     "f64 bool str, or arr:TYPE:V V V)"},
    {"set_file", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "KEY=PATH: give a key the text of a UTF-8 file as a str (a chat template)"},
    {"del", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "KEY or GLOB: delete the keys it matches (fnmatch; at least one)"},
    {"rename", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "OLD=NEW: rename a key, keeping its position and value"},
    {"rename_tensors", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "PATTERN=REPLACEMENT: rename tensors by an ECMAScript regular expression ($1 in the "
     "replacement), every match replaced"},
    {"special_token", CK_STAGE_TRANSFORM, nullptr, nullptr,
     "NAME:TEXT: set tokenizer.ggml.NAME_token_id to the id of token TEXT (eos:<|im_end|>)"},
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"meta", "1.0.0",
     "edits metadata (set, set_file, del, rename) and renames tensors; tensor bytes pass "
     "through"},
    options,
    {.create_transform = ck::transform_factory<ckplugin::meta::Meta>,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

CK_PLUGIN_ENTRY(descriptor)
