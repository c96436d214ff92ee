// The weights of a Hugging Face checkpoint: one model.safetensors, or the shards that
// model.safetensors.index.json names. Each shard is opened by the safetensors reader of the SDK
// (ckhost::safetensors: its header fully checked, its data memory-mapped), and the index is
// checked against what the shards really hold.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/model.hpp"
#include "ck/safetensors/reader.hpp"

namespace ckplugin::hf {

struct StoredTensor {
    const ck::TensorInfo* info;  // in its shard's header
    std::size_t shard;
    std::size_t index;  // in its shard's header
};

class Checkpoint {
  public:
    // Opens the weights of `folder`; throws ck::Error naming the file and the problem.
    void open(const std::filesystem::path& folder, ck::Context& context);
    // Opens one safetensors file of any name as the whole checkpoint (a PEFT adapter's
    // adapter_model.safetensors).
    void open_file(const std::filesystem::path& file, ck::Context& context);

    // Every tensor, in the order llama.cpp's converter visits them: shards in file-name order,
    // and each shard's tensors sorted by name (the order safetensors' safe_open().keys() gives).
    const std::vector<StoredTensor>& tensors() const noexcept { return tensors_; }
    const std::string& file_of(std::size_t shard) const { return shards_.at(shard).file; }
    std::size_t shard_count() const noexcept { return shards_.size(); }
    // Each shard's own integrity checks (bytes no tensor covers), for `ckhost verify`.
    void verify() {
        for (Shard& shard : shards_) shard.reader->verify();
    }
    ck::TensorView view(const StoredTensor& t) const {
        return shards_[t.shard].reader->tensor(t.index);
    }

  private:
    struct Shard {
        std::string file;
        std::unique_ptr<ck::safetensors::SafetensorsReader> reader;
        ck::ModelHeader header;
    };
    void open_shard(const std::filesystem::path& path, ck::Context& context);
    // Every opened shard's tensors into tensors_, each checked against and removed from the
    // index's `weight_map` when there is one.
    void list_tensors(std::map<std::string, std::string>& weight_map);

    std::vector<Shard> shards_;
    std::vector<StoredTensor> tensors_;
};

}  // namespace ckplugin::hf
