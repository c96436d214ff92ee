// Issue 29 benchmark: BF16 -> F16 as `dequant[to=f16]` converts it, single thread, GB/s of BF16
// read, on 64 MiB (past every cache) and 256 KiB (cache resident):
//   old/...       the path before issue 29, one 64Ki-value pool item at a time: a heap f32
//                 buffer per item, the best dequant kernel into it, then f32_to_f16 per value;
//   ISA/...       dequantize_and_narrow with that variant's kernels (a 2048-value buffer);
// plus the narrowing kernels alone (f32 -> f16 / bf16, GB/s of f32 read) and memcpy of 64 MiB
// as the memory-bandwidth yardstick (GB/s copied).
//
//   build/kernels/bench/bench_narrow --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ck/kernels/dequant.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/narrow.hpp"

namespace {

using ck::GgmlType;
using ck::Isa;

constexpr std::size_t small_values = 128 << 10;  // 256 KiB of BF16
constexpr std::size_t large_values = 32 << 20;   // 64 MiB of BF16
constexpr std::size_t item_values = 1 << 16;     // the transform's pool item
constexpr auto bf16_id = static_cast<std::uint32_t>(GgmlType::bf16);

// Weights as checkpoints hold them: BF16 of N(0, 0.02).
std::vector<std::uint16_t> bf16_weights(std::size_t n) {
    std::mt19937 random(29);
    std::normal_distribution<float> weight(0.0f, 0.02f);
    std::vector<std::uint16_t> out(n);
    for (auto& b : out) b = ck::kernels::f32_to_bf16(weight(random));
    return out;
}

bool supported(benchmark::State& state, Isa isa) {
    if (ck::best_supported_isa(ck::cpu_features()) >= isa) return true;
    state.SkipWithError("variant not supported by this CPU");
    return false;
}

void count_bytes(benchmark::State& state, std::size_t bytes) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(bytes));
}

// The conversion before issue 29, item by item as the transform ran it.
void old_bf16_to_f16(benchmark::State& state, std::size_t n) {
    const auto in = bf16_weights(n);
    std::vector<std::uint16_t> out(n);
    const auto dequant = ck::kernels::select_dequant_table(Isa::avx512).fn[bf16_id];
    const auto* src = reinterpret_cast<const std::byte*>(in.data());
    for (auto _ : state) {
        for (std::size_t first = 0; first < n; first += item_values) {
            const std::size_t m = std::min(item_values, n - first);
            std::vector<float> scratch(m);
            dequant(src + 2 * first, scratch.data(), m);
            for (std::size_t j = 0; j < m; ++j)
                out[first + j] = ck::kernels::f32_to_f16(scratch[j]);
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    count_bytes(state, 2 * n);
}

void bf16_to_f16(benchmark::State& state, Isa isa, std::size_t n) {
    if (!supported(state, isa)) return;
    const auto in = bf16_weights(n);
    std::vector<std::uint16_t> out(n);
    const auto dequant = ck::kernels::dequant_table(isa).fn[bf16_id];
    const auto narrow = ck::kernels::narrow_table(isa).to_f16;
    const ck::TypeInfo& bf16 = *ck::find_type(GgmlType::bf16);
    for (auto _ : state) {
        ck::kernels::dequantize_and_narrow(
            dequant, narrow, bf16, reinterpret_cast<const std::byte*>(in.data()), out.data(), n);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    count_bytes(state, 2 * n);
}

void narrow_only(benchmark::State& state, Isa isa, bool to_f16, std::size_t n) {
    if (!supported(state, isa)) return;
    std::vector<float> in(n);
    const auto weights = bf16_weights(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = ck::kernels::bf16_to_f32(weights[i]);
    std::vector<std::uint16_t> out(n);
    const auto& table = ck::kernels::narrow_table(isa);
    const auto fn = to_f16 ? table.to_f16 : table.to_bf16;
    for (auto _ : state) {
        fn(in.data(), out.data(), n);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    count_bytes(state, 4 * n);
}

void memcpy_baseline(benchmark::State& state) {
    std::vector<std::byte> from(2 * large_values, std::byte{1}), to(2 * large_values);
    for (auto _ : state) {
        std::memcpy(to.data(), from.data(), to.size());
        benchmark::DoNotOptimize(to.data());
        benchmark::ClobberMemory();
    }
    count_bytes(state, to.size());
}

int register_all() {
    for (std::size_t n : {large_values, small_values}) {
        const std::string size = n == large_values ? "/64MiB" : "/256KiB";
        benchmark::RegisterBenchmark(("bf16_to_f16/old" + size).c_str(), old_bf16_to_f16, n);
        for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
            const std::string name(ck::isa_name(isa));
            benchmark::RegisterBenchmark(("bf16_to_f16/" + name + size).c_str(), bf16_to_f16, isa,
                                         n);
            benchmark::RegisterBenchmark(("f32_to_f16/" + name + size).c_str(), narrow_only, isa,
                                         true, n);
            benchmark::RegisterBenchmark(("f32_to_bf16/" + name + size).c_str(), narrow_only, isa,
                                         false, n);
        }
    }
    benchmark::RegisterBenchmark("memcpy/64MiB", memcpy_baseline);
    return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
