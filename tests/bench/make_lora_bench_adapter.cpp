// Writes the input adapter of the LoRA benchmark (issue 33): a GGUF LoRA adapter of rank R
// (default 16) on every linear layer of a llama-architecture base GGUF (attn_q/k/v/output,
// ffn_gate/up/down of every layer), factors F32 N(0, 0.02)-like, adapter.lora.alpha 2R. Its
// shapes are read from the base's header. Written with the project's GGUF writer; never into the
// repository.
//
//   build/tests/bench/make_lora_bench_adapter BASE.gguf ADAPTER.gguf [R]
#include <cstdlib>
#include <cstring>
#include <string>

#include "gguf_reader.hpp"
#include "llama_bench_model.hpp"

namespace {

bool is_linear(const std::string& name) {
    for (const char* part :
         {".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_output.weight",
          ".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight"})
        if (name.starts_with("blk.") && name.ends_with(part)) return true;
    return false;
}

// Roughly normal with spread 0.02: the sum of four uniforms, centred.
std::vector<std::byte> factor(const ck::TensorInfo& t, ckbench::XorShift& rng) {
    std::vector<std::byte> out(t.nbytes);
    for (std::uint64_t i = 0; i < t.nbytes / 4; ++i) {
        float s = 0;
        for (int k = 0; k < 4; ++k) s += static_cast<float>(rng.next() >> 40) * 0x1p-24f;
        const float v = (s - 2.0f) * 0.035f;
        std::memcpy(out.data() + 4 * i, &v, 4);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const long rank = argc == 4 ? std::atol(argv[3]) : 16;
    if (argc < 3 || argc > 4 || rank < 1 || rank > 4096) {
        std::cerr << "usage: make_lora_bench_adapter BASE.gguf ADAPTER.gguf [RANK (default 16)]\n";
        return 2;
    }
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ck::ModelHeader base;
    try {
        base = reader.open(argv[1]);
    } catch (const ck::Error& e) {
        std::cerr << "make_lora_bench_adapter: " << e.what() << "\n";
        return 1;
    }
    ck::ModelHeader adapter;
    adapter.metadata.set("general.architecture", *base.metadata.find("general.architecture"));
    adapter.metadata.set("general.type", ck::Value::of_string("adapter"));
    adapter.metadata.set("adapter.type", ck::Value::of_string("lora"));
    adapter.metadata.set("adapter.lora.alpha", ck::Value::of_f32(2.0f * static_cast<float>(rank)));
    const auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
    for (const ck::TensorInfo& t : base.tensors) {
        if (!is_linear(t.name) || t.ne.size() != 2) continue;
        ck::TensorInfo a{t.name + ".lora_a", f32, {t.ne[0], rank}, 0, 0};
        ck::TensorInfo b{t.name + ".lora_b", f32, {rank, t.ne[1]}, 0, 0};
        a.nbytes = static_cast<std::uint64_t>(t.ne[0] * rank) * 4;
        b.nbytes = static_cast<std::uint64_t>(t.ne[1] * rank) * 4;
        adapter.tensors.push_back(a);
        adapter.tensors.push_back(b);
    }
    ckbench::XorShift rng;
    return ckbench::write_bench_model("make_lora_bench_adapter", argv[2], adapter,
                                      [&](const ck::TensorInfo& t) { return factor(t, rng); });
}
