// How the gguf writer cuts a model into a llama.cpp split set, by the rules of
// `llama-gguf-split --split` (tools/gguf-split/gguf-split.cpp), or into given tensor counts as
// `llama-quantize --keep-split` does (src/llama-quant.cpp): where each shard ends, what
// metadata each shard carries and what the files are called. Pure functions of the header and
// the options; GgufSplitWriter does the writing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "ck/metadata.hpp"
#include "ck/model.hpp"
#include "ck/options.hpp"

namespace ckplugin::gguf {
using namespace ck;

inline constexpr std::string_view split_no_key = "split.no";
inline constexpr std::string_view split_count_key = "split.count";
inline constexpr std::string_view split_tensors_count_key = "split.tensors.count";

// split.count and split.no are u16 in the file.
inline constexpr std::size_t max_shards = 65535;
// llama-gguf-split's --split-max-tensors default, used when only split_no_tensor_first is given.
inline constexpr std::uint64_t default_split_max_tensors = 128;

// Which tool's split keys the shards carry: the two set them in different orders, and
// llama-quantize sets none on a set of one file.
enum class SplitKeyLayout {
    gguf_split,  // llama-gguf-split: split.no, split.tensors.count, split.count; always
    quantize,    // llama-quantize --keep-split: split.no, split.count, split.tensors.count;
                 // none when the set is one file
};

struct SplitSettings {
    std::uint64_t max_bytes = 0;    // split_max_size in bytes; 0 when splitting by tensor count
    std::uint64_t max_tensors = 0;  // split_max_tensors; 0 when splitting by size
    bool no_tensor_first = false;   // split_no_tensor_first: shard 1 holds metadata only
    // split_counts: each shard's tensor count, in order (llama-quantize --keep-split's shards,
    // one per input shard); when given, the three above are unused.
    std::vector<std::uint64_t> counts = {};
    SplitKeyLayout layout = SplitKeyLayout::gguf_split;
};

// The writer options that ask for a split set (split_max_size, split_max_tensors,
// split_no_tensor_first, split_counts), or nullopt when none is given. Bad values are usage
// errors.
std::optional<SplitSettings> split_settings(const Options& options);

// A split_max_size value in bytes, read by the SDK's one reading of sizes with K, M, G, T as
// powers of 1000, as llama-gguf-split reads M and G: 5000000, 500M, 2G, 2GB, 2GiB. A fraction
// before a bare letter (1.5G, which llama-gguf-split would read as 1G) and anything else is a
// usage error naming `option`.
std::uint64_t parse_split_size(std::string_view text, std::string_view option = "split_max_size");

// Tensors [begin, end) of the header go to one shard.
struct ShardRange {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool empty() const noexcept { return begin == end; }
};

// The shards of `tensors`, in order, as llama-gguf-split cuts them. By size, a shard is closed
// before the tensor that would take its tensors' data (each padded to 32 bytes, whatever the
// model's alignment; metadata and tensor infos not counted) past max_bytes; by count, every
// max_tensors tensors; with counts, counts[k] tensors in shard k. A first tensor larger than
// max_bytes, counts that do not sum to the tensor count, or more than 65535 shards, is a usage
// error.
std::vector<ShardRange> plan_shards(const std::vector<TensorInfo>& tensors,
                                    const SplitSettings& settings);

// The metadata of shard `shard` (0-based) of `count` for a model of `n_tensors` tensors: the
// model's own keys (but its split keys) on the first shard only, then the split keys, always
// last (ggml's gguf_set_* removes a key and appends it). In the gguf_split layout split.no
// (u16), split.tensors.count (i32) and split.count (u16): llama-gguf-split sets split.count a
// second time once it knows the count. In the quantize layout split.no, split.count,
// split.tensors.count, and none at all when `count` is 1.
Metadata shard_metadata(const Metadata& model, std::size_t shard, std::size_t count,
                        std::size_t n_tensors, SplitKeyLayout layout = SplitKeyLayout::gguf_split);

// The shape as ggml writes it (ggml_n_dims): trailing dimensions of 1 dropped, at least one
// kept. A trailing 0 stays (ggml would drop it and change the element count).
std::vector<std::int64_t> ggml_written_shape(std::vector<std::int64_t> ne);

// Where the shards go, without the "-00001-of-00003.gguf" part: `-o DIR/NAME.gguf` gives
// DIR/NAME; `-o DIR/NAME` gives DIR/NAME (llama-gguf-split's own output argument); `-o DIR/`
// gives DIR/ and the input's name without its extension or its own shard suffix.
std::filesystem::path split_prefix(const std::filesystem::path& destination,
                                   const std::filesystem::path& input);

// PREFIX-00001-of-00003.gguf for shard 0 of 3 (llama_split_path's "%s-%05d-of-%05d.gguf").
// Refuses (ck::Error, exit 1) when PREFIX-NNNNN-of-MMMMM.gguf files of a set with another count
// than `count` are beside the new set: re-splitting in place would leave the old set's shards,
// which a reader given one of them still takes for a whole model.
void refuse_other_sets(const std::filesystem::path& prefix, std::size_t count);

std::filesystem::path shard_path(const std::filesystem::path& prefix, std::size_t shard,
                                 std::size_t count);

}  // namespace ckplugin::gguf
