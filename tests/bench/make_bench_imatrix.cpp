// Writes a synthetic importance matrix, in llama-imatrix's GGUF form, for the TinyLlama-shaped
// bench model of make_f16_bench_model with the same LAYERS: one entry per 2-D weight except
// token_embd (as llama-imatrix run with --process-output), in_sum2 per column drawn from a
// log-normal spread like real activations (a few columns 100x the rest), counts 51200 (100
// chunks of 512 tokens). The numbers only need the shape of real ones: the benchmark times the
// weighted quantizers, whose work does not depend on the values. Never into the repository.
//
//   build/tests/bench/make_bench_imatrix /tmp/ckhost-bench/tinyllama-6l.imatrix.gguf [LAYERS]
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "llama_bench_model.hpp"

namespace {

constexpr auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
constexpr float tokens = 51200.0f;

ck::TensorInfo entry_tensor(const std::string& name, std::int64_t columns) {
    ck::TensorInfo t;
    t.name = name;
    t.type = f32;
    t.ne = {columns};
    t.nbytes = *ck::tensor_bytes(f32, t.ne);
    return t;
}

// in_sum2: tokens x a per-column mean square, exp of a uniform in [-3, 3) (a spread of e^6).
std::vector<std::byte> sums(const ck::TensorInfo& t, ckbench::XorShift& rng) {
    std::vector<std::byte> out(t.nbytes);
    for (std::uint64_t i = 0; i < t.nbytes / 4; ++i) {
        const float u = static_cast<float>(rng.next() >> 40) * 0x1p-24f;
        const float v = tokens * std::exp(6.0f * u - 3.0f);
        std::memcpy(out.data() + 4 * i, &v, 4);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const int layers = argc == 3 ? std::atoi(argv[2]) : 4;
    if (argc < 2 || argc > 3 || layers < 1 || layers > 64) {
        std::cerr << "usage: make_bench_imatrix OUTPUT.gguf [LAYERS (default 4)]\n";
        return 2;
    }
    ckbench::LlamaShape shape;
    shape.layers = layers;
    const auto model = ckbench::llama_bench_header(shape, "", 1, [](const std::string&, int) {
        return static_cast<std::uint32_t>(ck::GgmlType::f16);
    });
    ck::ModelHeader h;
    h.format = "gguf";
    h.metadata.set("general.type", ck::Value::of_string("imatrix"));
    const std::string dataset = "synthetic (make_bench_imatrix)";
    h.metadata.set("imatrix.datasets",
                   ck::Value::of_array(ck::ArrayValue::of_strings(std::span(&dataset, 1))));
    h.metadata.set("imatrix.chunk_count", ck::Value::of_u32(100));
    h.metadata.set("imatrix.chunk_size", ck::Value::of_u32(512));
    for (const ck::TensorInfo& t : model.tensors) {
        if (t.ne.size() != 2 || t.name == "token_embd.weight") continue;
        h.tensors.push_back(entry_tensor(t.name + ".in_sum2", t.ne[0]));
        h.tensors.push_back(entry_tensor(t.name + ".counts", 1));
    }
    ckbench::XorShift rng;
    return ckbench::write_bench_model("make_bench_imatrix", argv[1], h,
                                      [&](const ck::TensorInfo& t) {
                                          if (t.name.ends_with(".in_sum2")) return sums(t, rng);
                                          std::vector<std::byte> out(4);
                                          std::memcpy(out.data(), &tokens, 4);
                                          return out;
                                      });
}
