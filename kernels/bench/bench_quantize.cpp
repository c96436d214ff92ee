// Quantization throughput, MB/s of f32 input, on 16 MiB of N(0, 1) values: every type
// reference_quantizer() has (scalar), and the AVX2 / AVX-512 variants of the types that have
// their own (quantize.hpp: quantizer()); on one thread and on every CPU this process may use
// (threads:N, each thread quantizing the input into its own output: the total rate). The
// K-quants and IQ4 with importance weights: scalar and their variants, on one thread.
//
//   build/kernels/bench/bench_quantize --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/kernels/quantize_weighted.hpp"
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

// With importance weights (quantize_weighted.hpp), MB/s of f32 input: the first 4 MiB of the
// input (the scalar searches are slow) as rows of 4096 values, each row with its own
// imatrix-like weights (1e-3 .. 1e3), one call per row as the quantize plugin makes them.
constexpr std::size_t weighted_input_bytes = 4 << 20;
constexpr std::size_t weighted_row = 4096;

const std::vector<float>& importance() {
    static const std::vector<float> w = [] {
        std::vector<float> v(weighted_input_bytes / sizeof(float));
        std::mt19937 random(7);
        std::uniform_real_distribution<float> exponent(-3.0f, 3.0f);
        for (float& f : v) f = std::pow(10.0f, exponent(random));
        return v;
    }();
    return w;
}

void quantize_weighted(benchmark::State& state, std::uint32_t type, Isa isa) {
    if (ck::best_supported_isa(ck::cpu_features()) < isa) {
        state.SkipWithError("variant not supported by this CPU");
        return;
    }
    const ck::TypeInfo& info = *ck::find_type(type);
    const float* x = input().data();
    const std::vector<float>& w = importance();
    const std::size_t row_bytes = weighted_row / info.block_size * info.block_bytes;
    std::vector<std::byte> out(w.size() / weighted_row * row_bytes);
    const auto fn = ck::kernels::weighted_quantizer(isa, type);
    for (auto _ : state) {
        for (std::size_t r = 0; r < w.size() / weighted_row; ++r)
            fn(x + r * weighted_row, out.data() + r * row_bytes, weighted_row,
               w.data() + r * weighted_row);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(weighted_input_bytes));
}

// The weighted K-quant family (Q2_K..Q6_K, IQ4_NL, IQ4_XS), one thread: scalar and the variants.
int register_weighted_kquants() {
    for (ck::GgmlType t :
         {ck::GgmlType::q2_k, ck::GgmlType::q3_k, ck::GgmlType::q4_k, ck::GgmlType::q5_k,
          ck::GgmlType::q6_k, ck::GgmlType::iq4_nl, ck::GgmlType::iq4_xs}) {
        const auto type = static_cast<std::uint32_t>(t);
        for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
            if (!ck::kernels::has_own_weighted_quantizer(isa, type)) continue;
            const std::string name = std::string(ck::find_type(type)->name) + "/weighted/" +
                                     std::string(ck::isa_name(isa));
            benchmark::RegisterBenchmark(name.c_str(), quantize_weighted, type, isa)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
    }
    return 0;
}

const int registered_weighted_kquants = register_weighted_kquants();

}  // namespace

BENCHMARK_MAIN();
