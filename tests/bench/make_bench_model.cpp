// Writes the input of the bump benchmark (issue 4): a TinyLlama-1.1B-shaped llama model in
// llama.cpp's Q4_K_M mix (22 layers, E 2048, 32 heads / 4 kv heads, F 5632, V 32000, ctx 2048;
// Q6_K for output.weight and for attn_v / ffn_down of the "more bits" layers, Q4_K for the
// other weights, F32 norms), about 670 MB. The blocks are synthetic: random quants with sane
// f16 scales, which is all a byte-copying converter can tell apart from real weights. Written
// one tensor at a time with the project's own GGUF writer. With `3b`, the same mix in Llama
// 3.2 3B's shape with an untied output (28 layers, E 3072, 24 / 8 heads, F 8192, V 128256),
// about 2.2 GB, with a synthetic SentencePiece vocabulary of that size: the input of the hf
// export benchmark (issue 31).
//
//   build/tests/bench/make_bench_model /tmp/ckhost-bench/tinyllama-q4_k_m.gguf [3b]
#include <cstdio>
#include <cstring>
#include <string_view>

#include "llama_bench_model.hpp"

namespace {

constexpr auto q4_k = static_cast<std::uint32_t>(ck::GgmlType::q4_k);
constexpr auto q6_k = static_cast<std::uint32_t>(ck::GgmlType::q6_k);
ckbench::LlamaShape shape{};
constexpr ckbench::LlamaShape llama_3b_shape{28, 3072, 24, 8, 8192, 128256, 131072};

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

// A SentencePiece vocabulary of `count` tokens as llama.cpp's keys hold one (<unk>, <s>, </s>,
// the 256 byte pieces, then normal pieces scored by rank), so that a writer of tokenizers (the hf
// writer) has a vocabulary of Llama 3's size to carry.
void add_sentencepiece_vocabulary(ck::Metadata& m, std::uint32_t count) {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<std::int32_t> types = {2, 3, 3};  // UNKNOWN, CONTROL, CONTROL
    char byte[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(byte, sizeof byte, "<0x%02X>", b);
        tokens.emplace_back(byte);
        types.push_back(6);  // BYTE
    }
    while (tokens.size() < count) {
        tokens.push_back("\u2581piece" + std::to_string(tokens.size()));
        types.push_back(1);  // NORMAL
    }
    std::vector<float> scores(count);
    for (std::uint32_t i = 0; i < count; ++i) scores[i] = -static_cast<float>(i);
    m.set("tokenizer.ggml.model", ck::Value::of_string("llama"));
    m.set("tokenizer.ggml.tokens", ck::Value::of_array(ck::ArrayValue::of_strings(tokens)));
    m.set("tokenizer.ggml.scores", ck::Value::of_array(ck::ArrayValue::of<float>(
                                       ck::ValueType::f32, std::span<const float>(scores))));
    m.set("tokenizer.ggml.token_type",
          ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(
              ck::ValueType::i32, std::span<const std::int32_t>(types))));
    m.set("tokenizer.ggml.bos_token_id", ck::Value::of_u32(1));
    m.set("tokenizer.ggml.eos_token_id", ck::Value::of_u32(2));
}

}  // namespace

int main(int argc, char** argv) {
    const bool big = argc == 3 && std::string_view(argv[2]) == "3b";
    if (argc != 2 && !big) {
        std::cerr << "usage: make_bench_model OUTPUT.gguf [3b]\n";
        return 2;
    }
    if (big) shape = llama_3b_shape;
    auto header =
        ckbench::llama_bench_header(shape,
                                    big ? "llama-3.2-3b-shaped synthetic (ckhost bench)"
                                        : "tinyllama-1.1b-shaped synthetic (ckhost bench)",
                                    15 /* MOSTLY_Q4_K_M */, q4_k_m_type);
    if (big) add_sentencepiece_vocabulary(header.metadata, shape.vocab);
    ckbench::XorShift rng;
    return ckbench::write_bench_model("make_bench_model", argv[1], header,
                                      [&](const ck::TensorInfo& t) { return blocks(t, rng); });
}
