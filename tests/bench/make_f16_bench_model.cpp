// Writes the input of the GGUF-lite benchmark (issue 5): a TinyLlama-1.1B-shaped llama model in
// F16 (embed 2048, 32 heads / 4 kv heads, ffn 5632, vocab 32000) cut to 4 layers, about 614 MB:
// the full-size token_embd and output tensors (131 MB each) are what tests the streaming. The
// weights are synthetic, uniform in [-0.05, 0.05] (the range of real ones, so quantization does
// the same work), norms are F32 ones. Written one tensor at a time with the project's own GGUF
// writer; never into the repository.
//
//   build/tests/bench/make_f16_bench_model /tmp/ckhost-bench/tinyllama-4l-f16.gguf
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "gguf_writer.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t layers = 4, embed = 2048, heads = 32, kv_heads = 4, ffn = 5632,
                        vocab = 32000, context = 2048;
constexpr auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
constexpr auto f16 = static_cast<std::uint32_t>(ck::GgmlType::f16);

class Random {
  public:
    std::uint64_t next() {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return state_;
    }
    // Uniform in [-0.05, 0.05), as an f16.
    std::uint16_t weight() {
        const float u = static_cast<float>(next() >> 40) * 0x1p-24f;
        return ck::kernels::f32_to_f16((u - 0.5f) * 0.1f);
    }

  private:
    std::uint64_t state_ = 0x9E3779B97F4A7C15ull;
};

std::vector<std::byte> values(std::uint32_t type, std::uint64_t nbytes, Random& rng) {
    std::vector<std::byte> out(nbytes);
    if (type == f32) {
        const float one = 1.0f;
        for (std::uint64_t i = 0; i < nbytes / 4; ++i) std::memcpy(out.data() + 4 * i, &one, 4);
        return out;
    }
    for (std::uint64_t i = 0; i < nbytes / 2; ++i) {
        const std::uint16_t h = rng.weight();
        std::memcpy(out.data() + 2 * i, &h, 2);
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

ck::ModelHeader bench_header() {
    ck::ModelHeader h;
    h.format = "gguf";
    auto& m = h.metadata;
    m.set("general.architecture", ck::Value::of_string("llama"));
    m.set("general.name", ck::Value::of_string("tinyllama-shaped 4-layer F16 (ckhost bench)"));
    m.set("general.file_type", ck::Value::of_u32(1));  // MOSTLY_F16
    m.set("llama.vocab_size", ck::Value::of_u32(vocab));
    m.set("llama.context_length", ck::Value::of_u32(context));
    m.set("llama.embedding_length", ck::Value::of_u32(embed));
    m.set("llama.block_count", ck::Value::of_u32(layers));
    m.set("llama.feed_forward_length", ck::Value::of_u32(ffn));
    m.set("llama.rope.dimension_count", ck::Value::of_u32(embed / heads));
    m.set("llama.attention.head_count", ck::Value::of_u32(heads));
    m.set("llama.attention.head_count_kv", ck::Value::of_u32(kv_heads));
    m.set("llama.attention.layer_norm_rms_epsilon", ck::Value::of_f32(1e-5f));
    m.set("llama.rope.freq_base", ck::Value::of_f32(10000.0f));

    const std::int64_t E = embed, F = ffn, kv = std::int64_t(kv_heads) * (embed / heads);
    add(h, "token_embd.weight", f16, {E, vocab});
    for (std::uint32_t i = 0; i < layers; ++i) {
        const std::string blk = "blk." + std::to_string(i) + ".";
        add(h, blk + "attn_norm.weight", f32, {E});
        add(h, blk + "attn_q.weight", f16, {E, E});
        add(h, blk + "attn_k.weight", f16, {E, kv});
        add(h, blk + "attn_v.weight", f16, {E, kv});
        add(h, blk + "attn_output.weight", f16, {E, E});
        add(h, blk + "ffn_norm.weight", f32, {E});
        add(h, blk + "ffn_gate.weight", f16, {E, F});
        add(h, blk + "ffn_up.weight", f16, {E, F});
        add(h, blk + "ffn_down.weight", f16, {F, E});
    }
    add(h, "output_norm.weight", f32, {E});
    add(h, "output.weight", f16, {E, vocab});
    return h;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: make_f16_bench_model OUTPUT.gguf\n";
        return 2;
    }
    try {
        const fs::path path = argv[1];
        ck::ModelHeader header = bench_header();
        ck::Context context;
        ck::gguf::GgufWriter writer(context);
        writer.prepare(header, path);
        ck::OutputSet out(true);
        writer.begin(out);
        Random rng;
        for (std::size_t i = 0; i < header.tensors.size(); ++i) {
            const ck::TensorInfo& t = header.tensors[i];
            writer.write(i, ck::TensorView::owning(values(t.type, t.nbytes, rng)));
        }
        writer.finish();
        out.commit();
        std::cout << path.string() << ": " << fs::file_size(path) << " bytes, "
                  << header.tensors.size() << " tensors\n";
    } catch (const ck::Error& e) {
        std::cerr << "make_f16_bench_model: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
