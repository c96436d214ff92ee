#include "bump_test_models.hpp"

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "bump_versions.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace cktest {

ModelBuilder ModelBuilder::from_gguf(const fs::path& path) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ModelBuilder b;
    b.header_ = reader.open(path);
    for (std::size_t i = 0; i < b.header_.tensors.size(); ++i) {
        auto view = reader.tensor(i);
        b.data_.emplace_back(view.bytes().begin(), view.bytes().end());
    }
    // Arrays in the header point into the reader's mapping, which the shared owner keeps.
    return b;
}

std::vector<std::byte> random_f32(std::uint64_t count, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 0.02f);
    std::vector<std::byte> out(count * 4);
    for (std::uint64_t i = 0; i < count; ++i) {
        ck::le::store(out.data() + 4 * i, dist(rng));
    }
    return out;
}

ModelBuilder ModelBuilder::llama_f32(const LlamaShape& s) {
    ModelBuilder b;
    b.header_.format = "gguf";
    auto& m = b.header_.metadata;
    const std::string a = s.arch + ".";
    m.set("general.architecture", ck::Value::of_string(s.arch));
    m.set("general.name", ck::Value::of_string("test-" + s.arch));
    m.set(a + "context_length", ck::Value::of_u32(s.context));
    m.set(a + "embedding_length", ck::Value::of_u32(s.embed));
    m.set(a + "block_count", ck::Value::of_u32(s.layers));
    m.set(a + "feed_forward_length", ck::Value::of_u32(s.ffn));
    m.set(a + "attention.head_count", ck::Value::of_u32(s.heads));
    m.set(a + "attention.head_count_kv", ck::Value::of_u32(s.kv_heads));
    m.set(a + "attention.layer_norm_rms_epsilon", ck::Value::of_f32(1e-6f));
    m.set(a + "rope.freq_base", ck::Value::of_f32(10000.0f));

    const std::int64_t E = s.embed, F = s.ffn, hd = s.embed / s.heads;
    const std::int64_t kv = s.kv_heads * hd;
    std::uint32_t seed = s.seed;
    auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
    auto add = [&](const std::string& name, std::vector<std::int64_t> ne) {
        std::uint64_t n = 1;
        for (auto d : ne) n *= static_cast<std::uint64_t>(d);
        b.set_tensor(name, f32, ne, random_f32(n, seed++));
    };
    add("token_embd.weight", {E, s.vocab});
    for (std::uint32_t i = 0; i < s.layers; ++i) {
        const std::string blk = "blk." + std::to_string(i) + ".";
        add(blk + "attn_norm.weight", {E});
        add(blk + "attn_q.weight", {E, E});
        add(blk + "attn_k.weight", {E, kv});
        add(blk + "attn_v.weight", {E, kv});
        if (s.qkv_biases) {
            add(blk + "attn_q.bias", {E});
            add(blk + "attn_k.bias", {kv});
            add(blk + "attn_v.bias", {kv});
        }
        add(blk + "attn_output.weight", {E, E});
        add(blk + "ffn_norm.weight", {E});
        add(blk + "ffn_gate.weight", {E, F});
        add(blk + "ffn_up.weight", {E, F});
        add(blk + "ffn_down.weight", {F, E});
    }
    add("output_norm.weight", {E});
    if (s.output_weight) add("output.weight", {E, s.vocab});
    return b;
}

std::size_t ModelBuilder::index_of(const std::string& name) const {
    for (std::size_t i = 0; i < header_.tensors.size(); ++i)
        if (header_.tensors[i].name == name) return i;
    throw std::runtime_error("test model has no tensor " + name);
}

bool ModelBuilder::has(const std::string& name) const {
    return header_.find_tensor(name) != nullptr;
}

const ck::TensorInfo& ModelBuilder::info(const std::string& name) const {
    return header_.tensors[index_of(name)];
}

const std::vector<std::byte>& ModelBuilder::bytes(const std::string& name) const {
    return data_[index_of(name)];
}

void ModelBuilder::set_tensor(const std::string& name, std::uint32_t type,
                              std::vector<std::int64_t> ne, std::vector<std::byte> bytes) {
    auto nbytes = ck::tensor_bytes(type, ne);
    if (!nbytes || *nbytes != bytes.size())
        throw std::runtime_error("test tensor " + name + ": bytes do not match type and shape");
    ck::TensorInfo t;
    t.name = name;
    t.type = type;
    t.ne = std::move(ne);
    t.nbytes = *nbytes;
    if (has(name)) {
        std::size_t i = index_of(name);
        header_.tensors[i] = std::move(t);
        data_[i] = std::move(bytes);
    } else {
        header_.tensors.push_back(std::move(t));
        data_.push_back(std::move(bytes));
    }
}

void ModelBuilder::set_zeros(const std::string& name, std::uint32_t type,
                             std::vector<std::int64_t> ne) {
    auto nbytes = ck::tensor_bytes(type, ne);
    if (!nbytes) throw std::runtime_error("test tensor " + name + ": impossible shape");
    set_tensor(name, type, std::move(ne), std::vector<std::byte>(*nbytes));
}

void ModelBuilder::remove_tensor(const std::string& name) {
    std::size_t i = index_of(name);
    header_.tensors.erase(header_.tensors.begin() + static_cast<std::ptrdiff_t>(i));
    data_.erase(data_.begin() + static_cast<std::ptrdiff_t>(i));
}

void ModelBuilder::write(const fs::path& path) const {
    ck::RecordingContext context;
    ckplugin::gguf::GgufWriter writer(context);
    writer.prepare(header_, path);
    ck::OutputSet out(true);
    writer.begin(out);
    for (std::size_t i = 0; i < header_.tensors.size(); ++i)
        writer.write(i, ck::TensorView::held(std::span<const std::byte>(data_[i]), nullptr));
    writer.finish();
    out.commit();
}

std::vector<std::byte> BumpContents::slot(const std::string& name) const {
    const ck::TensorInfo* t = header.find_tensor(name);
    if (!t) throw std::runtime_error("bump file has no slot " + name);
    auto begin = file.begin() + static_cast<std::ptrdiff_t>(t->source_offset);
    std::vector<std::byte> out(t->nbytes);
    std::memcpy(out.data(), &*begin, t->nbytes);
    return out;
}

std::uint64_t BumpContents::u64_at(std::size_t offset) const {
    return ck::le::load<std::uint64_t>(file.data() + offset);
}

std::uint32_t BumpContents::u32_at(std::size_t offset) const {
    return ck::le::load<std::uint32_t>(file.data() + offset);
}

BumpContents read_bump(const fs::path& path) {
    ck::RecordingContext context;
    ckplugin::bump::BumpReader reader(context);
    BumpContents c;
    c.header = reader.open(path);
    c.file = read_file(path);
    return c;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace cktest
