// Issue 6 benchmark: repack throughput, MB/s of INPUT (source blocks read), per path and per
// variant, single thread, on 64 MiB of input (far beyond the caches), accuracy figures included
// (they are part of every repack the plugin runs).
//
//   build/kernels/bench/bench_repack --benchmark_min_time=1
//
// Inputs are random blocks with ordinary f16 scales (a NaN or subnormal scale would measure the
// CPU's slow paths, not the kernel); float sources are Gaussian.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "block_scales.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/repack.hpp"

namespace {

using ck::GgmlType;
using ck::Isa;
using ck::kernels::RepackTarget;

constexpr std::size_t input_bytes = 64 << 20;

std::vector<std::byte> make_input(GgmlType type, std::size_t elements) {
    const ck::TypeInfo& info = *ck::find_type(type);
    std::vector<std::byte> data(elements / info.block_size * info.block_bytes);
    std::mt19937 random(42);
    std::normal_distribution<float> gaussian(0.0f, 0.02f);
    if (type == GgmlType::f32 || type == GgmlType::f16 || type == GgmlType::bf16) {
        for (std::size_t i = 0; i < elements; ++i) {
            const float v = gaussian(random);
            if (type == GgmlType::f32) {
                std::memcpy(data.data() + 4 * i, &v, 4);
                continue;
            }
            const std::uint16_t h =
                type == GgmlType::f16 ? ck::kernels::f32_to_f16(v) : ck::kernels::f32_to_bf16(v);
            std::memcpy(data.data() + 2 * i, &h, 2);
        }
        return data;
    }
    for (auto& b : data) b = static_cast<std::byte>(random());
    std::uniform_real_distribution<float> scale(0.0005f, 0.002f);
    for (std::size_t b = 0; b < data.size() / info.block_bytes; ++b)
        for (std::size_t offset : cktest::f16_scale_offsets(type)) {
            const std::uint16_t h = ck::kernels::f32_to_f16(scale(random));
            std::memcpy(data.data() + b * info.block_bytes + offset, &h, 2);
        }
    return data;
}

void repack(benchmark::State& state, GgmlType type, RepackTarget target, Isa isa) {
    if (ck::best_supported_isa(ck::cpu_features()) < isa) {
        state.SkipWithError("variant not supported by this CPU");
        return;
    }
    const ck::TypeInfo& info = *ck::find_type(type);
    // The element count whose source is 64 MiB, in whole 256-element units.
    const std::size_t n = input_bytes / info.block_bytes * info.block_size / 256 * 256;
    const auto input = make_input(type, n);
    std::vector<std::uint8_t> codes(ck::kernels::code_bytes(target, n));
    std::vector<std::uint16_t> scales(ck::kernels::scale_count(target, n));
    const auto fn = ck::kernels::repack_table(isa).find(static_cast<std::uint32_t>(type), target);
    for (auto _ : state) {
        ck::kernels::RepackError error;
        fn(input.data(), n, codes.data(), scales.data(), error);
        benchmark::DoNotOptimize(codes.data());
        benchmark::DoNotOptimize(error);
        benchmark::ClobberMemory();
    }
    // Decimal MB/s of input ("input=1.83G/s"); bytes_per_second would be 1024-based.
    state.counters["input"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * double(input.size()),
                           benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1000);
}

int register_all() {
    struct Path {
        GgmlType type;
        RepackTarget target;
        const char* name;
    };
    const Path paths[] = {
        {GgmlType::q8_0, RepackTarget::int8, "q8_0->int8"},
        {GgmlType::q4_0, RepackTarget::nf4, "q4_0->nf4"},
        {GgmlType::q4_k, RepackTarget::int8, "q4_K->int8"},
        {GgmlType::q6_k, RepackTarget::int8, "q6_K->int8"},
        {GgmlType::f16, RepackTarget::int8, "f16->int8"},
        {GgmlType::f16, RepackTarget::nf4, "f16->nf4"},
    };
    for (const Path& p : paths)
        for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
            const std::string name =
                std::string(p.name) + "/" + std::string(ck::isa_name(isa)) + "/64MiB";
            benchmark::RegisterBenchmark(name.c_str(), repack, p.type, p.target, isa)
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
        }
    return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
