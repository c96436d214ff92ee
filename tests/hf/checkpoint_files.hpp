// Test helpers of the hf suites: checkpoint folders built from the public ones (a safetensors
// file's header and data, written back with a chosen set of tensors; config.json edited), and
// conversions of them run through ckhost, refused or not.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/metadata.hpp"
#include "ck/support/little_endian.hpp"
#include "test_support.hpp"

namespace cktest::hf {

struct Safetensors {
    nlohmann::ordered_json header;
    std::vector<unsigned char> data;
};

inline Safetensors read_safetensors(const std::filesystem::path& file) {
    const auto bytes = cktest::read_file(file);
    const auto length = ck::le::load<std::uint64_t>(bytes.data());
    Safetensors st;
    st.header = nlohmann::ordered_json::parse(bytes.begin() + 8,
                                              bytes.begin() + 8 + static_cast<long>(length));
    st.data.assign(bytes.begin() + 8 + static_cast<long>(length), bytes.end());
    return st;
}

// A safetensors file as save_file lays it out: the header's compact JSON padded with spaces to a
// multiple of 8 bytes, then the data.
inline void write_safetensors_file(const std::filesystem::path& path,
                                   const nlohmann::ordered_json& header,
                                   const std::vector<unsigned char>& data) {
    std::string text = header.dump();
    while ((8 + text.size()) % 8) text += ' ';
    char length[8];
    ck::le::store(length, static_cast<std::uint64_t>(text.size()));
    std::ofstream out(path, std::ios::binary);
    out.write(length, 8);
    out << text;
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size()));
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
    write_safetensors_file(path, header, data);
}

// The tensor names of `source`, without the __metadata__ entry.
inline std::vector<std::string> tensor_names(const Safetensors& source) {
    std::vector<std::string> names;
    for (const auto& item : source.header.items())
        if (item.key() != "__metadata__") names.push_back(item.key());
    return names;
}

// Rewrites `folder`/config.json after `edit`.
inline void edit_config(const std::filesystem::path& folder,
                        const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json config =
        nlohmann::ordered_json::parse(std::ifstream(folder / "config.json"));
    edit(config);
    std::ofstream(folder / "config.json") << config.dump(2);
}

// `options`: global options put before the pipeline (--max-memory, --threads).
inline cktest::RunResult convert(const std::string& pipeline, const std::filesystem::path& in,
                                 const std::filesystem::path& out,
                                 std::vector<std::string> options = {}) {
    options.insert(options.end(), {"--pipeline", pipeline, "-i", in.string(), "-o", out.string()});
    return cktest::run_ckhost(options);
}

// hf:gguf refuses `folder`: exit 1, the message names the problem, no output and no temporary.
inline void expect_refused(const std::filesystem::path& folder,
                           const std::vector<std::string>& message_parts) {
    cktest::TempDir out;
    const auto r = convert("hf:gguf", folder, out / "model.gguf");
    BOOST_TEST(r.exit_code == 1);
    for (const std::string& part : message_parts) BOOST_TEST(cktest::contains(r.err, part), r.err);
    BOOST_TEST(out.entries().empty());
}

// A string key of a converted model's metadata; the test stops when it is absent.
inline std::string string_key(const ck::Metadata& md, const std::string& key) {
    const ck::Value* value = md.find(key);
    BOOST_TEST_REQUIRE(value != nullptr, key << " is absent");
    return value->str();
}

}  // namespace cktest::hf
