// Writes the input of the GGUF-lite benchmark (issue 5): a TinyLlama-1.1B-shaped llama model in
// F16 (embed 2048, 32 heads / 4 kv heads, ffn 5632, vocab 32000) cut to 4 layers, about 614 MB
// (or LAYERS layers: 22 is the whole 2.2 GB model the thread benchmark quantizes):
// the full-size token_embd and output tensors (131 MB each) are what tests the streaming. The
// weights are synthetic, uniform in [-0.05, 0.05] (the range of real ones, so quantization does
// the same work), norms are F32 ones. Written one tensor at a time with the project's own GGUF
// writer; never into the repository.
//
//   build/tests/bench/make_f16_bench_model /tmp/ckhost-bench/tinyllama-4l-f16.gguf [LAYERS]
#include <cstdlib>
#include <cstring>
#include <string>

#include "ck/kernels/float_convert.hpp"
#include "llama_bench_model.hpp"

namespace {

constexpr auto f16 = static_cast<std::uint32_t>(ck::GgmlType::f16);

// Uniform in [-0.05, 0.05), as f16.
std::vector<std::byte> values(const ck::TensorInfo& t, ckbench::XorShift& rng) {
    if (t.type != f16) return ckbench::ones_f32(t.nbytes);
    std::vector<std::byte> out(t.nbytes);
    for (std::uint64_t i = 0; i < t.nbytes / 2; ++i) {
        const float u = static_cast<float>(rng.next() >> 40) * 0x1p-24f;
        const std::uint16_t h = ck::kernels::f32_to_f16((u - 0.5f) * 0.1f);
        std::memcpy(out.data() + 2 * i, &h, 2);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const int layers = argc == 3 ? std::atoi(argv[2]) : 4;
    if (argc < 2 || argc > 3 || layers < 1 || layers > 64) {
        std::cerr << "usage: make_f16_bench_model OUTPUT.gguf [LAYERS (default 4)]\n";
        return 2;
    }
    ckbench::LlamaShape shape;
    shape.layers = layers;
    const auto header = ckbench::llama_bench_header(
        shape, "tinyllama-shaped " + std::to_string(layers) + "-layer F16 (ckhost bench)",
        1 /* MOSTLY_F16 */, [](const std::string&, int) { return f16; });
    ckbench::XorShift rng;
    return ckbench::write_bench_model("make_f16_bench_model", argv[1], header,
                                      [&](const ck::TensorInfo& t) { return values(t, rng); });
}
