// Quantization throughput, MB/s of f32 input, on 16 MiB of N(0, 1) values: every type
// reference_quantizer() has (scalar), and the AVX2 / AVX-512 variants of the types that have
// their own (quantize.hpp: quantizer()); on one thread and on every CPU this process may use
// (threads:N, each thread quantizing the input into its own output: the total rate).
//
//   build/kernels/bench/bench_quantize --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/parallel.hpp"

namespace {

using ck::Isa;

constexpr std::size_t input_bytes = 16 << 20;

const std::vector<float>& input() {
    static const std::vector<float> x = [] {
        std::vector<float> v(input_bytes / sizeof(float));
        std::mt19937 random(42);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (float& f : v) f = normal(random);
        return v;
    }();
    return x;
}

void quantize(benchmark::State& state, std::uint32_t type, Isa isa) {
    if (ck::best_supported_isa(ck::cpu_features()) < isa) {
        state.SkipWithError("variant not supported by this CPU");
        return;
    }
    const ck::TypeInfo& info = *ck::find_type(type);
    const std::vector<float>& x = input();
    std::vector<std::byte> out(x.size() / info.block_size * info.block_bytes);
    const auto fn = ck::kernels::quantizer(isa, type);
    for (auto _ : state) {
        fn(x.data(), out.data(), x.size());
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(input_bytes));
}

int register_all() {
    for (std::uint32_t type = 0; type < ck::ggml_type_count; ++type) {
        if (!ck::kernels::reference_quantizer(type)) continue;
        for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
            if (isa != Isa::scalar && !ck::kernels::has_own_quantizer(isa, type)) continue;
            const std::string name =
                std::string(ck::find_type(type)->name) + "/" + std::string(ck::isa_name(isa));
            auto* b = benchmark::RegisterBenchmark(name.c_str(), quantize, type, isa)
                          ->Unit(benchmark::kMillisecond)
                          ->UseRealTime()
                          ->Threads(1);
            if (ck::available_cpus() > 1) b->Threads(static_cast<int>(ck::available_cpus()));
        }
    }
    return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
