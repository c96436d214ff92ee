// Writes the input of the repack benchmark (issue 6): a TinyLlama-1.1B-shaped llama model
// (22 layers, E 2048, 32 heads / 4 kv heads, F 5632, V 32000) with every 2-D weight in Q8_0
// (about 1.17 GB) or Q4_0 (about 620 MB), F32 norms. The blocks are synthetic: random quants
// with f16 scales of real weights' size, which is all a repacker can tell apart from a trained
// model. Written one tensor at a time with the project's own GGUF writer.
//
//   build/tests/bench/make_repack_bench_model /tmp/ckhost-bench/tinyllama-q8_0.gguf [q8_0|q4_0]
#include <cstring>

#include "llama_bench_model.hpp"

namespace {

// Random quants after each block's f16 scale (Q8_0 and Q4_0 blocks both start with it), the
// scale between about 2^-13 and 2^-10: weights of N(0, 0.02) quantized to 8 or 4 bits.
std::vector<std::byte> blocks(const ck::TensorInfo& t, ckbench::XorShift& rng) {
    if (t.type == static_cast<std::uint32_t>(ck::GgmlType::f32)) return ckbench::ones_f32(t.nbytes);
    std::vector<std::byte> out(t.nbytes);
    rng.fill(out.data(), out.size());
    const std::uint32_t block = ck::find_type(t.type)->block_bytes;
    for (std::uint64_t b = 0; b < t.nbytes / block; ++b) {
        const auto d = static_cast<std::uint16_t>(0x0800 + rng.next() % 0x0C00);
        std::memcpy(out.data() + b * block, &d, 2);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string type = argc == 3 ? argv[2] : "q8_0";
    if (argc < 2 || argc > 3 || (type != "q8_0" && type != "q4_0")) {
        std::cerr << "usage: make_repack_bench_model OUTPUT.gguf [q8_0|q4_0]\n";
        return 2;
    }
    const bool q8 = type == "q8_0";
    const auto weights = static_cast<std::uint32_t>(q8 ? ck::GgmlType::q8_0 : ck::GgmlType::q4_0);
    const auto header = ckbench::llama_bench_header(
        ckbench::LlamaShape{}, "tinyllama-1.1b-shaped synthetic (ckhost bench)",
        q8 ? 7u : 2u /* MOSTLY_Q8_0 / MOSTLY_Q4_0 */,
        [&](const std::string&, int) { return weights; });
    ckbench::XorShift rng;
    return ckbench::write_bench_model("make_repack_bench_model", argv[1], header,
                                      [&](const ck::TensorInfo& t) { return blocks(t, rng); });
}
