// Writes the input of the bump benchmark (issue 4): a TinyLlama-1.1B-shaped llama model in
// llama.cpp's Q4_K_M mix (22 layers, E 2048, 32 heads / 4 kv heads, F 5632, V 32000, ctx 2048;
// Q6_K for output.weight and for attn_v / ffn_down of the "more bits" layers, Q4_K for the
// other weights, F32 norms), about 670 MB. The blocks are synthetic: random quants with sane
// f16 scales, which is all a byte-copying converter can tell apart from real weights. Written
// one tensor at a time with the project's own GGUF writer.
//
//   build/tests/bench/make_bench_model /tmp/ckhost-bench/tinyllama-q4_k_m.gguf
#include <cstring>

#include "llama_bench_model.hpp"

namespace {

constexpr auto q4_k = static_cast<std::uint32_t>(ck::GgmlType::q4_k);
constexpr auto q6_k = static_cast<std::uint32_t>(ck::GgmlType::q6_k);
constexpr ckbench::LlamaShape shape{};

// llama.cpp's use_more_bits(): the layers whose attn_v and ffn_down Q4_K_M keeps in Q6_K.
bool more_bits(int i) {
    const int n = static_cast<int>(shape.layers);
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

std::uint32_t q4_k_m_type(const std::string& kind, int layer) {
    if (kind == "output.weight") return q6_k;
    if ((kind == "attn_v.weight" || kind == "ffn_down.weight") && more_bits(layer)) return q6_k;
    return q4_k;
}

// Random quants; f16 scales between about 2^-10 and 2^-7, the range real Q4_K/Q6_K weights have.
std::vector<std::byte> blocks(const ck::TensorInfo& t, ckbench::XorShift& rng) {
    if (t.type != q4_k && t.type != q6_k) return ckbench::ones_f32(t.nbytes);
    std::vector<std::byte> out(t.nbytes);
    rng.fill(out.data(), out.size());
    auto scale = [&] { return static_cast<std::uint16_t>(0x1400 + rng.next() % 0x0C00); };
    const std::uint64_t block = t.type == q4_k ? 144 : 210;
    for (std::uint64_t b = 0; b < t.nbytes / block; ++b) {
        std::byte* p = out.data() + b * block;
        const std::uint16_t d = scale();
        if (t.type == q4_k) {  // d, dmin, scales[12], qs[128]
            const std::uint16_t dmin = scale();
            std::memcpy(p, &d, 2);
            std::memcpy(p + 2, &dmin, 2);
        } else {  // ql[128], qh[64], scales[16], d
            std::memcpy(p + 208, &d, 2);
        }
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: make_bench_model OUTPUT.gguf\n";
        return 2;
    }
    const auto header =
        ckbench::llama_bench_header(shape, "tinyllama-1.1b-shaped synthetic (ckhost bench)",
                                    15 /* MOSTLY_Q4_K_M */, q4_k_m_type);
    ckbench::XorShift rng;
    return ckbench::write_bench_model("make_bench_model", argv[1], header,
                                      [&](const ck::TensorInfo& t) { return blocks(t, rng); });
}
