// Writes the input of the bump benchmark (issue 4): a TinyLlama-1.1B-shaped llama model in
// llama.cpp's Q4_K_M mix (22 layers, E 2048, 32 heads / 4 kv heads, F 5632, V 32000, ctx 2048;
// Q6_K for output.weight and for attn_v / ffn_down of the "more bits" layers, Q4_K for the
// other weights, F32 norms), about 670 MB. The blocks are synthetic: random quants with sane
// f16 scales, which is all a byte-copying converter can tell apart from real weights. Written
// one tensor at a time with the project's own GGUF writer.
//
//   build/tests/bench/make_bench_model /tmp/ckhost-bench/tinyllama-q4_k_m.gguf
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_writer.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t layers = 22, embed = 2048, heads = 32, kv_heads = 4, ffn = 5632,
                        vocab = 32000, context = 2048;
constexpr auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
constexpr auto q4_k = static_cast<std::uint32_t>(ck::GgmlType::q4_k);
constexpr auto q6_k = static_cast<std::uint32_t>(ck::GgmlType::q6_k);

// llama.cpp's use_more_bits(): the layers whose attn_v and ffn_down Q4_K_M keeps in Q6_K.
bool more_bits(std::uint32_t i) {
    return i < layers / 8 || i >= 7 * layers / 8 || (i - layers / 8) % 3 == 2;
}

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
            std::uint64_t v = next();
            std::memcpy(p, &v, 8);
        }
        for (std::uint64_t v = next(); n > 0; --n, ++p, v >>= 8) *p = std::byte(v);
    }
    // An f16 scale between about 2^-10 and 2^-7: the range real Q4_K/Q6_K weights have.
    std::uint16_t f16_scale() { return static_cast<std::uint16_t>(0x1400 + next() % 0x0C00); }

  private:
    std::uint64_t state_ = 0x9E3779B97F4A7C15ull;
};

std::vector<std::byte> blocks(std::uint32_t type, std::uint64_t nbytes, Random& rng) {
    std::vector<std::byte> out(nbytes);
    if (type == f32) {
        for (std::uint64_t i = 0; i < nbytes / 4; ++i) {
            float one = 1.0f;
            std::memcpy(out.data() + 4 * i, &one, 4);
        }
        return out;
    }
    rng.fill(out.data(), out.size());
    const std::uint64_t block = type == q4_k ? 144 : 210;
    for (std::uint64_t b = 0; b < nbytes / block; ++b) {
        std::byte* p = out.data() + b * block;
        std::uint16_t d = rng.f16_scale();
        if (type == q4_k) {  // d, dmin, scales[12], qs[128]
            std::uint16_t dmin = rng.f16_scale();
            std::memcpy(p, &d, 2);
            std::memcpy(p + 2, &dmin, 2);
        } else {  // ql[128], qh[64], scales[16], d
            std::memcpy(p + 208, &d, 2);
        }
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
    m.set("general.name", ck::Value::of_string("tinyllama-1.1b-shaped synthetic (ckhost bench)"));
    m.set("general.file_type", ck::Value::of_u32(15));  // MOSTLY_Q4_K_M
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
    m.set("general.quantization_version", ck::Value::of_u32(2));

    const std::int64_t E = embed, F = ffn, kv = std::int64_t(kv_heads) * (embed / heads);
    add(h, "token_embd.weight", q4_k, {E, vocab});
    for (std::uint32_t i = 0; i < layers; ++i) {
        const std::string blk = "blk." + std::to_string(i) + ".";
        const std::uint32_t more = more_bits(i) ? q6_k : q4_k;
        add(h, blk + "attn_norm.weight", f32, {E});
        add(h, blk + "attn_q.weight", q4_k, {E, E});
        add(h, blk + "attn_k.weight", q4_k, {E, kv});
        add(h, blk + "attn_v.weight", more, {E, kv});
        add(h, blk + "attn_output.weight", q4_k, {E, E});
        add(h, blk + "ffn_norm.weight", f32, {E});
        add(h, blk + "ffn_gate.weight", q4_k, {E, F});
        add(h, blk + "ffn_up.weight", q4_k, {E, F});
        add(h, blk + "ffn_down.weight", more, {F, E});
    }
    add(h, "output_norm.weight", f32, {E});
    add(h, "output.weight", q6_k, {E, vocab});
    return h;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: make_bench_model OUTPUT.gguf\n";
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
            writer.write(i, ck::TensorView::owning(blocks(t.type, t.nbytes, rng)));
        }
        writer.finish();
        out.commit();
        std::cout << path.string() << ": " << fs::file_size(path) << " bytes, "
                  << header.tensors.size() << " tensors\n";
    } catch (const ck::Error& e) {
        std::cerr << "make_bench_model: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
