#include "checkpoint.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/support/tensor_io.hpp"

namespace fs = std::filesystem;

namespace ckplugin::hf {
namespace {

constexpr const char* single_file = "model.safetensors";
constexpr const char* index_file = "model.safetensors.index.json";

// The index's weight_map: tensor name -> shard file name.
std::map<std::string, std::string> read_index(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw ck::Error("cannot open", path.string());
    nlohmann::json index;
    try {
        index = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw ck::Error(std::string("not valid JSON: ") + e.what(), path.string());
    }
    const auto map = index.is_object() ? index.find("weight_map") : index.end();
    if (map == index.end() || !map->is_object())
        throw ck::Error("no \"weight_map\" object", path.string(), std::nullopt, "weight_map");
    std::map<std::string, std::string> weights;
    for (auto it = map->begin(); it != map->end(); ++it) {
        if (!it->is_string())
            throw ck::Error("the shard of a tensor must be a file name", path.string(),
                            std::nullopt, ck::support::tensor_subject(it.key()));
        const std::string shard = it->get<std::string>();
        if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
            throw ck::Error("shard '" + shard + "' is not a file name in the checkpoint folder",
                            path.string(), std::nullopt, ck::support::tensor_subject(it.key()));
        weights.emplace(it.key(), shard);
    }
    if (weights.empty()) throw ck::Error("the weight_map is empty", path.string());
    return weights;
}

}  // namespace

void Checkpoint::open_shard(const fs::path& path, ck::Context& context) {
    Shard shard;
    shard.file = path.string();
    shard.reader = std::make_unique<ck::safetensors::SafetensorsReader>(context);
    shard.header = shard.reader->open(path);
    shards_.push_back(std::move(shard));
}

void Checkpoint::open(const fs::path& folder, ck::Context& context) {
    const fs::path index_path = folder / index_file;
    std::map<std::string, std::string> weight_map;
    if (fs::exists(index_path)) {
        weight_map = read_index(index_path);
        const std::set<std::string> files = [&weight_map] {
            std::set<std::string> names;
            for (const auto& entry : weight_map) names.insert(entry.second);
            return names;
        }();
        for (const std::string& name : files) {
            const fs::path shard = folder / name;
            if (!fs::exists(shard))
                throw ck::Error("shard '" + name + "' named by the index is missing",
                                index_path.string(), std::nullopt, "weight_map");
            open_shard(shard, context);
        }
    } else if (fs::exists(folder / single_file)) {
        open_shard(folder / single_file, context);
    } else {
        throw ck::Error(
            std::string("no ") + single_file + " or " + index_file + " in the checkpoint folder",
            folder.string());
    }

    list_tensors(weight_map);
    if (!weight_map.empty()) {
        const auto& [name, shard] = *weight_map.begin();
        throw ck::Error("the index puts tensor '" + name + "' in '" + shard +
                            "', which does not hold it (" + std::to_string(weight_map.size()) +
                            " listed tensor(s) missing)",
                        (folder / shard).string(), std::nullopt, ck::support::tensor_subject(name));
    }
}

void Checkpoint::open_file(const fs::path& file, ck::Context& context) {
    open_shard(file, context);
    std::map<std::string, std::string> no_index;
    list_tensors(no_index);
}

void Checkpoint::list_tensors(std::map<std::string, std::string>& weight_map) {
    for (std::size_t s = 0; s < shards_.size(); ++s) {
        const Shard& shard = shards_[s];
        const std::string file_name = fs::path(shard.file).filename().string();
        std::vector<StoredTensor> in_shard;
        for (std::size_t i = 0; i < shard.header.tensors.size(); ++i) {
            const ck::TensorInfo& t = shard.header.tensors[i];
            if (!weight_map.empty()) {
                const auto listed = weight_map.find(t.name);
                if (listed == weight_map.end())
                    throw ck::Error(
                        "the shard holds tensor '" + t.name + "', which the index does not list",
                        shard.file, t.source_offset, ck::support::tensor_subject(t.name));
                if (listed->second != file_name)
                    throw ck::Error("the shard holds tensor '" + t.name +
                                        "', which the index puts in '" + listed->second + "'",
                                    shard.file, t.source_offset,
                                    ck::support::tensor_subject(t.name));
                weight_map.erase(listed);
            }
            in_shard.push_back({&t, s, i});
        }
        std::sort(in_shard.begin(), in_shard.end(),
                  [](const StoredTensor& a, const StoredTensor& b) {
                      return a.info->name < b.info->name;
                  });
        tensors_.insert(tensors_.end(), in_shard.begin(), in_shard.end());
    }
}

}  // namespace ckplugin::hf
