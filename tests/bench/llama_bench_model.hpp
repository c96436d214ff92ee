// Shared by the benchmark input generators: a llama-shaped model header with synthetic
// tensors, written one tensor at a time with the project's own GGUF writer. Each generator
// supplies only its weight types and how it fills a tensor's bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_writer.hpp"

namespace ckbench {

struct LlamaShape {
    std::uint32_t layers = 22, embed = 2048, heads = 32, kv_heads = 4, ffn = 5632, vocab = 32000,
                  context = 2048;
};

// The type of one weight: `kind` is the tensor name without "blk.N." (e.g. "attn_v.weight"),
// `layer` its layer (-1 for token_embd and output). Norms are always F32.
using WeightType = std::function<std::uint32_t(const std::string& kind, int layer)>;
// The bytes of one tensor.
using TensorBytes = std::function<std::vector<std::byte>(const ck::TensorInfo&)>;

// A fast deterministic generator (xorshift64): the inputs are the same on every run.
class XorShift {
  public:
    std::uint64_t next() {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return state_;
    }
    void fill(std::byte* p, std::size_t n) {
        for (; n >= 8; p += 8, n -= 8) {
            const std::uint64_t v = next();
            std::memcpy(p, &v, 8);
        }
        for (std::uint64_t v = next(); n > 0; --n, ++p, v >>= 8) *p = std::byte(v);
    }

  private:
    std::uint64_t state_ = 0x9E3779B97F4A7C15ull;
};

// Norm weights of 1.0.
inline std::vector<std::byte> ones_f32(std::uint64_t nbytes) {
    std::vector<std::byte> out(nbytes);
    const float one = 1.0f;
    for (std::uint64_t i = 0; i < nbytes / 4; ++i) std::memcpy(out.data() + 4 * i, &one, 4);
    return out;
}

inline ck::ModelHeader llama_bench_header(const LlamaShape& s, const std::string& name,
                                          std::uint32_t file_type, const WeightType& weight_type) {
    ck::ModelHeader h;
    h.format = "gguf";
    auto& m = h.metadata;
    m.set("general.architecture", ck::Value::of_string("llama"));
    m.set("general.name", ck::Value::of_string(name));
    m.set("general.file_type", ck::Value::of_u32(file_type));
    m.set("llama.vocab_size", ck::Value::of_u32(s.vocab));
    m.set("llama.context_length", ck::Value::of_u32(s.context));
    m.set("llama.embedding_length", ck::Value::of_u32(s.embed));
    m.set("llama.block_count", ck::Value::of_u32(s.layers));
    m.set("llama.feed_forward_length", ck::Value::of_u32(s.ffn));
    m.set("llama.rope.dimension_count", ck::Value::of_u32(s.embed / s.heads));
    m.set("llama.attention.head_count", ck::Value::of_u32(s.heads));
    m.set("llama.attention.head_count_kv", ck::Value::of_u32(s.kv_heads));
    m.set("llama.attention.layer_norm_rms_epsilon", ck::Value::of_f32(1e-5f));
    m.set("llama.rope.freq_base", ck::Value::of_f32(10000.0f));

    const auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
    auto add = [&](const std::string& tensor, std::uint32_t type, std::vector<std::int64_t> ne) {
        ck::TensorInfo t;
        t.name = tensor;
        t.type = type;
        t.ne = std::move(ne);
        t.nbytes = *ck::tensor_bytes(type, t.ne);
        h.tensors.push_back(std::move(t));
    };
    const std::int64_t E = s.embed, F = s.ffn, V = s.vocab;
    const std::int64_t kv = std::int64_t(s.kv_heads) * (s.embed / s.heads);
    add("token_embd.weight", weight_type("token_embd.weight", -1), {E, V});
    for (std::uint32_t i = 0; i < s.layers; ++i) {
        const std::string blk = "blk." + std::to_string(i) + ".";
        const int layer = static_cast<int>(i);
        auto weight = [&](const std::string& kind, std::vector<std::int64_t> ne) {
            add(blk + kind, weight_type(kind, layer), std::move(ne));
        };
        add(blk + "attn_norm.weight", f32, {E});
        weight("attn_q.weight", {E, E});
        weight("attn_k.weight", {E, kv});
        weight("attn_v.weight", {E, kv});
        weight("attn_output.weight", {E, E});
        add(blk + "ffn_norm.weight", f32, {E});
        weight("ffn_gate.weight", {E, F});
        weight("ffn_up.weight", {E, F});
        weight("ffn_down.weight", {F, E});
    }
    add("output_norm.weight", f32, {E});
    add("output.weight", weight_type("output.weight", -1), {E, V});
    for (const auto& t : h.tensors)
        if (ck::find_type(t.type)->quantized) {
            m.set("general.quantization_version", ck::Value::of_u32(2));
            break;
        }
    return h;
}

// Writes the model and prints its size; returns the process exit code.
inline int write_bench_model(const char* tool, const std::filesystem::path& path,
                             const ck::ModelHeader& header, const TensorBytes& bytes) {
    try {
        ck::RecordingContext context;
        ckplugin::gguf::GgufWriter writer(context);
        writer.prepare(header, path);
        ck::OutputSet out(true);
        writer.begin(out);
        for (std::size_t i = 0; i < header.tensors.size(); ++i)
            writer.write(i, ck::TensorView::owning(bytes(header.tensors[i])));
        writer.finish();
        out.commit();
        std::cout << path.string() << ": " << std::filesystem::file_size(path) << " bytes, "
                  << header.tensors.size() << " tensors\n";
    } catch (const ck::Error& e) {
        std::cerr << tool << ": " << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace ckbench
