// The weights of an exported checkpoint as safetensors files, sharded as transformers'
// save_pretrained shards them: one model.safetensors when everything fits in one shard, else
// model-0000K-of-0000N.safetensors and model.safetensors.index.json. The container's framing is
// the SDK's (ck/safetensors/format.hpp); what is here is the sharding and the streaming of the
// data, in order, across the files.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ck/model.hpp"
#include "ck/output.hpp"

namespace ckplugin::hf {

inline constexpr std::string_view single_weights_file = "model.safetensors";
inline constexpr std::string_view weights_index_file = "model.safetensors.index.json";

// One tensor as a safetensors header lists it.
struct ShardEntry {
    std::string name;
    std::string_view dtype;  // "BF16"
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;
};

struct ShardFile {
    std::string file_name;         // in the checkpoint folder
    std::string preamble;          // header length, header JSON (__metadata__ {"format": "pt"})
    std::uint64_t data_bytes = 0;  // after the preamble
};

struct ShardLayout {
    std::vector<ShardFile> files;
    std::optional<std::string> index;  // model.safetensors.index.json's text, when sharded
};

// The tensors in order, each shard's data packed in that order; a new shard starts when the
// next tensor would take the current one past `max_shard_bytes` and it holds a tensor already
// (so a tensor larger than that has a shard of its own).
ShardLayout plan_shards(const std::vector<ShardEntry>& tensors, std::uint64_t max_shard_bytes);

// Whether `file_name` is a weights file of a checkpoint (model*.safetensors or the index): one
// such file left in a folder beside an export would be read with it.
bool is_weights_file(std::string_view file_name);

// The shards' data as one run of bytes: each piece goes to the shard whose data it continues,
// and a shard's file is finished (its buffer freed) as soon as its last byte is written.
class ShardStream {
  public:
    // `files[k]` is the created file of `layout[k]`: its preamble is written now.
    void start(const std::vector<ck::OutputFile*>& files, const std::vector<ShardFile>& layout);
    void put(std::span<const std::byte> bytes);
    // A view of a mapped input is copied by the kernel (ck::support::write_streaming).
    void put(const ck::TensorView& view);
    // Throws unless every shard is complete.
    void check_complete() const;

  private:
    struct Open {
        ck::OutputFile* file;
        std::uint64_t left;  // data bytes still to come
    };
    // Finishes the complete shards at the front.
    void finish_complete();
    // Calls write(offset, size) for the pieces of [0, size) in each shard, in order.
    template <class Write>
    void spread(std::uint64_t size, Write&& write);

    std::vector<Open> shards_;
    std::size_t current_ = 0;
};

}  // namespace ckplugin::hf
