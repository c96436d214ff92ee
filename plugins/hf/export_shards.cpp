#include "export_shards.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/safetensors/format.hpp"
#include "ck/support/tensor_io.hpp"
#include "export_config.hpp"

namespace ckplugin::hf {
namespace {

// save_pretrained's names: model-00001-of-00003.safetensors.
std::string shard_name(std::size_t k, std::size_t count) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", k + 1, count);
    return name;
}

// A shard's preamble: __metadata__ {"format": "pt"} (what torch's save_file records, and what
// transformers checks when it loads), then each tensor with its offsets in the shard's data.
ShardFile shard_file(std::string file_name, const std::vector<ShardEntry>& tensors,
                     std::size_t begin, std::size_t end) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    header[std::string(ck::safetensors::metadata_key)] = {{"format", "pt"}};
    std::uint64_t offset = 0;
    for (std::size_t i = begin; i < end; ++i) {
        const ShardEntry& t = tensors[i];
        header[t.name] = {{"dtype", std::string(t.dtype)},
                          {"shape", t.shape},
                          {"data_offsets", {offset, offset + t.bytes}}};
        offset += t.bytes;
    }
    return {std::move(file_name), ck::safetensors::file_preamble(header.dump()), offset};
}

// model.safetensors.index.json: the sum of the tensors' bytes and each tensor's file.
std::string index_text(const std::vector<ShardEntry>& tensors,
                       const std::vector<std::size_t>& shard_of,
                       const std::vector<ShardFile>& files) {
    std::uint64_t total = 0;
    std::map<std::string, std::string> weight_map;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        total += tensors[i].bytes;
        weight_map[tensors[i].name] = files[shard_of[i]].file_name;
    }
    nlohmann::ordered_json index = nlohmann::ordered_json::object();
    index["metadata"] = {{"total_size", total}};
    index["weight_map"] = nlohmann::ordered_json::object();
    for (const auto& [name, file] : weight_map) index["weight_map"][name] = file;
    return hf_json_text(index);
}

}  // namespace

ShardLayout plan_shards(const std::vector<ShardEntry>& tensors, std::uint64_t max_shard_bytes) {
    // save_pretrained's rule (transformers' shard_checkpoint): tensors in order, a new shard
    // when the next one would take the current past the maximum, unless it is empty.
    std::vector<std::size_t> starts = {0}, shard_of;
    std::uint64_t shard_bytes = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        if (shard_bytes + tensors[i].bytes > max_shard_bytes && i > starts.back()) {
            starts.push_back(i);
            shard_bytes = 0;
        }
        shard_bytes += tensors[i].bytes;
        shard_of.push_back(starts.size() - 1);
    }
    starts.push_back(tensors.size());
    ShardLayout layout;
    const std::size_t count = starts.size() - 1;
    for (std::size_t k = 0; k < count; ++k)
        layout.files.push_back(
            shard_file(count == 1 ? std::string(single_weights_file) : shard_name(k, count),
                       tensors, starts[k], starts[k + 1]));
    if (count > 1) layout.index = index_text(tensors, shard_of, layout.files);
    return layout;
}

bool is_weights_file(std::string_view file_name) {
    return file_name == weights_index_file ||
           (file_name.starts_with("model") && file_name.ends_with(".safetensors"));
}

void ShardStream::start(const std::vector<ck::OutputFile*>& files,
                        const std::vector<ShardFile>& layout) {
    shards_.clear();
    for (std::size_t k = 0; k < layout.size(); ++k) {
        files.at(k)->write(layout[k].preamble.data(), layout[k].preamble.size());
        shards_.push_back({files[k], layout[k].data_bytes});
    }
    current_ = 0;
    finish_complete();
}

void ShardStream::finish_complete() {
    // Its buffer goes now: held until commit, N shards would cost N buffers of memory.
    while (current_ < shards_.size() && shards_[current_].left == 0)
        shards_[current_++].file->finish();
}

template <class Write>
void ShardStream::spread(std::uint64_t size, Write&& write) {
    std::uint64_t done = 0;
    while (done < size) {
        if (current_ == shards_.size())
            throw ck::plugin_bug("more tensor bytes than the checkpoint's shards hold",
                                 "hf writer");
        Open& shard = shards_[current_];
        const std::uint64_t n = std::min(size - done, shard.left);
        write(*shard.file, done, n);
        shard.left -= n;
        done += n;
        finish_complete();
    }
}

void ShardStream::put(std::span<const std::byte> bytes) {
    spread(bytes.size(), [&](ck::OutputFile& file, std::uint64_t offset, std::uint64_t n) {
        file.write(bytes.subspan(offset, n));
    });
}

void ShardStream::put(const ck::TensorView& view) {
    spread(view.size(), [&](ck::OutputFile& file, std::uint64_t offset, std::uint64_t n) {
        ck::support::write_streaming(file, view.slice(offset, n));
    });
}

void ShardStream::check_complete() const {
    if (current_ != shards_.size())
        throw ck::plugin_bug("a shard of the checkpoint was not completely written", "hf writer");
}

}  // namespace ckplugin::hf
