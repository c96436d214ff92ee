// Test helpers that build Hugging Face checkpoint folders from the public ones: a safetensors
// file's header and data, written back with a chosen set of tensors.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace cktest::hf {

struct Safetensors {
    nlohmann::ordered_json header;
    std::vector<unsigned char> data;
};

inline Safetensors read_safetensors(const std::filesystem::path& file) {
    const auto bytes = cktest::read_file(file);
    std::uint64_t length = 0;
    std::memcpy(&length, bytes.data(), 8);
    Safetensors st;
    st.header = nlohmann::ordered_json::parse(bytes.begin() + 8,
                                              bytes.begin() + 8 + static_cast<long>(length));
    st.data.assign(bytes.begin() + 8 + static_cast<long>(length), bytes.end());
    return st;
}

// Writes the tensors `names` of `source`, in that order, as one safetensors file.
inline void write_shard(const std::filesystem::path& path, const Safetensors& source,
                        const std::vector<std::string>& names) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    std::vector<unsigned char> data;
    for (const std::string& name : names) {
        nlohmann::ordered_json entry = source.header.at(name);
        const auto begin = entry["data_offsets"][0].get<std::size_t>();
        const auto end = entry["data_offsets"][1].get<std::size_t>();
        entry["data_offsets"] = {data.size(), data.size() + end - begin};
        data.insert(data.end(), source.data.begin() + static_cast<long>(begin),
                    source.data.begin() + static_cast<long>(end));
        header[name] = entry;
    }
    std::string text = header.dump();
    while ((8 + text.size()) % 8) text += ' ';
    const std::uint64_t length = text.size();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&length), 8);
    out << text;
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size()));
}

// The tensor names of `source`, without the __metadata__ entry.
inline std::vector<std::string> tensor_names(const Safetensors& source) {
    std::vector<std::string> names;
    for (const auto& item : source.header.items())
        if (item.key() != "__metadata__") names.push_back(item.key());
    return names;
}

}  // namespace cktest::hf
