// Writes the input of the repack benchmark (issue 6): a TinyLlama-1.1B-shaped llama model
// (22 layers, E 2048, 32 heads / 4 kv heads, F 5632, V 32000) with every 2-D weight in Q8_0
// (about 1.17 GB) or Q4_0 (about 620 MB), F32 norms. The blocks are synthetic: random quants
// with f16 scales of real weights' size, which is all a repacker can tell apart from a trained
// model. Written one tensor at a time with the project's own GGUF writer.
//
//   build/tests/bench/make_repack_bench_model /tmp/ckhost-bench/tinyllama-q8_0.gguf [q8_0|q4_0]
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_writer.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t layers = 22, embed = 2048, heads = 32, kv_heads = 4, ffn = 5632,
                        vocab = 32000, context = 2048;
constexpr auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);

class Random {
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
    // An f16 scale between about 2^-13 and 2^-10: weights of N(0, 0.02) quantized to 8 or 4 bits.
    std::uint16_t f16_scale() { return static_cast<std::uint16_t>(0x0800 + next() % 0x0C00); }

  private:
    std::uint64_t state_ = 0x9E3779B97F4A7C15ull;
};

// Q8_0 and Q4_0 blocks both start with their f16 scale.
std::vector<std::byte> blocks(std::uint32_t type, std::uint64_t nbytes, Random& rng) {
    std::vector<std::byte> out(nbytes);
    if (type == f32) {
        const float one = 1.0f;
        for (std::uint64_t i = 0; i < nbytes / 4; ++i) std::memcpy(out.data() + 4 * i, &one, 4);
        return out;
    }
    rng.fill(out.data(), out.size());
    const std::uint32_t block = ck::find_type(type)->block_bytes;
    for (std::uint64_t b = 0; b < nbytes / block; ++b) {
        const std::uint16_t d = rng.f16_scale();
        std::memcpy(out.data() + b * block, &d, 2);
    }
    return out;
}

void add(ck::ModelHeader& h, const std::string& name, std::uint32_t type,
         std::vector<std::int64_t> ne) {
    ck::TensorInfo t;
    t.name = name;
    t.type = type;
    t.ne = std::move(ne);
    t.nbytes = *ck::tensor_bytes(type, t.ne);
    h.tensors.push_back(std::move(t));
}

ck::ModelHeader bench_header(std::uint32_t weights) {
    ck::ModelHeader h;
    h.format = "gguf";
    auto& m = h.metadata;
    m.set("general.architecture", ck::Value::of_string("llama"));
    m.set("general.name", ck::Value::of_string("tinyllama-1.1b-shaped synthetic (ckhost bench)"));
    // llama.cpp's MOSTLY_Q8_0 / MOSTLY_Q4_0
    m.set("general.file_type",
          ck::Value::of_u32(weights == static_cast<std::uint32_t>(ck::GgmlType::q8_0) ? 7 : 2));
    m.set("llama.vocab_size", ck::Value::of_u32(vocab));
    m.set("llama.context_length", ck::Value::of_u32(context));
    m.set("llama.embedding_length", ck::Value::of_u32(embed));
    m.set("llama.block_count", ck::Value::of_u32(layers));
    m.set("llama.feed_forward_length", ck::Value::of_u32(ffn));
    m.set("llama.rope.dimension_count", ck::Value::of_u32(embed / heads));
    m.set("llama.attention.head_count", ck::Value::of_u32(heads));
    m.set("llama.attention.head_count_kv", ck::Value::of_u32(kv_heads));
    m.set("llama.attention.layer_norm_rms_epsilon", ck::Value::of_f32(1e-5f));
    m.set("general.quantization_version", ck::Value::of_u32(2));

    const std::int64_t E = embed, F = ffn, kv = std::int64_t(kv_heads) * (embed / heads);
    add(h, "token_embd.weight", weights, {E, vocab});
    for (std::uint32_t i = 0; i < layers; ++i) {
        const std::string blk = "blk." + std::to_string(i) + ".";
        add(h, blk + "attn_norm.weight", f32, {E});
        add(h, blk + "attn_q.weight", weights, {E, E});
        add(h, blk + "attn_k.weight", weights, {E, kv});
        add(h, blk + "attn_v.weight", weights, {E, kv});
        add(h, blk + "attn_output.weight", weights, {E, E});
        add(h, blk + "ffn_norm.weight", f32, {E});
        add(h, blk + "ffn_gate.weight", weights, {E, F});
        add(h, blk + "ffn_up.weight", weights, {E, F});
        add(h, blk + "ffn_down.weight", weights, {F, E});
    }
    add(h, "output_norm.weight", f32, {E});
    add(h, "output.weight", weights, {E, vocab});
    return h;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string type = argc == 3 ? argv[2] : "q8_0";
    if (argc < 2 || argc > 3 || (type != "q8_0" && type != "q4_0")) {
        std::cerr << "usage: make_repack_bench_model OUTPUT.gguf [q8_0|q4_0]\n";
        return 2;
    }
    try {
        const fs::path path = argv[1];
        const auto weights =
            static_cast<std::uint32_t>(type == "q8_0" ? ck::GgmlType::q8_0 : ck::GgmlType::q4_0);
        ck::ModelHeader header = bench_header(weights);
        ck::Context context;
        ck::gguf::GgufWriter writer(context);
        writer.prepare(header, path);
        ck::OutputSet out(true);
        writer.begin(out);
        Random rng;
        for (std::size_t i = 0; i < header.tensors.size(); ++i) {
            const ck::TensorInfo& t = header.tensors[i];
            writer.write(i, ck::TensorView::owning(blocks(t.type, t.nbytes, rng)));
        }
        writer.finish();
        out.commit();
        std::cout << path.string() << ": " << fs::file_size(path) << " bytes, "
                  << header.tensors.size() << " tensors\n";
    } catch (const ck::Error& e) {
        std::cerr << "make_repack_bench_model: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
