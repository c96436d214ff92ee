// Split sets as llama.cpp's llama-gguf-split writes them: a model cut into files named
// PREFIX-00001-of-0000N.gguf ... PREFIX-0000N-of-0000N.gguf. Every shard carries `split.no`
// (u16, 0-based), `split.count` (u16) and `split.tensors.count` (i32, the set's total); the
// first also carries the model's metadata. `split.count = 0` is what `llama-gguf-split --merge`
// leaves in a merged file: one file, not a set.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ck/context.hpp"
#include "ck/model.hpp"
#include "gguf_reader.hpp"
#include "gguf_split_plan.hpp"

namespace ckplugin::gguf {
using namespace ck;

struct SplitKeys {
    std::uint32_t no = 0;      // 0-based
    std::uint32_t count = 0;   // files in the set
    std::int64_t tensors = 0;  // tensors in the whole set
};

// The split keys of a file's metadata; nullopt when it is not part of a set (no split.count,
// or the 0 a merged file carries). Throws ck::Error naming `file` and the key when they are
// incomplete, of the wrong type or inconsistent (split.no not below split.count).
std::optional<SplitKeys> split_keys(const Metadata& metadata, const std::string& file);

// The PREFIX of `path` when its name is that of shard `no` of `count`; nullopt otherwise.
std::optional<std::string> shard_prefix(const std::filesystem::path& path, std::uint32_t no,
                                        std::uint32_t count);

// Every file of the set `given` (read from `path`, with split keys `keys`) belongs to, in
// shard order, each read on its own and checked against the others: each present, each
// carrying the set's split.count and its own split.no, the tensor total, no tensor twice.
// Throws ck::Error naming the file at fault.
std::vector<ParsedGguf> open_split_set(ParsedGguf given, const std::filesystem::path& path,
                                       const SplitKeys& keys, Context& context);

// The set as one model: the first shard's metadata with split.count = 0, moved last as ggml's
// gguf_set_* moves a key it sets (exactly what
// `llama-gguf-split --merge` writes, so gguf:gguf merges a set), every shard's tensors in
// order, and among the format facts those of shard `opened` (the file given: its own size and
// data start), then which shard it is, the set's size and each shard's file. Moves the headers
// out of `set` (a 150k-token vocabulary is not copied); its mappings stay.
ModelHeader present_as_one_model(std::vector<ParsedGguf>& set, std::uint32_t opened);

}  // namespace ckplugin::gguf
