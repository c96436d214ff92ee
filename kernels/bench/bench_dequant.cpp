// Issue benchmark: dequantization throughput, GB/s of f32 written, per type and per variant,
// single thread, at 256 KiB of output (cache resident) and 64 MiB; the types only the scalar
// reference decodes at 256 KiB; plus memset of 64 MiB as the memory-bandwidth yardstick.
//
//   build/kernels/bench/bench_dequant --benchmark_min_time=0.2
//
// Inputs are random blocks whose f16 scales are ordinary normal numbers (a NaN or subnormal
// scale would measure the CPU's slow paths, not the kernel).
#include <benchmark/benchmark.h>

#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "block_scales.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/float_convert.hpp"

namespace {

using ck::GgmlType;
using ck::Isa;

constexpr std::size_t small_out = 256 << 10;
constexpr std::size_t large_out = 64 << 20;

struct AlignedFloats {
    explicit AlignedFloats(std::size_t n)
        : values(static_cast<float*>(::operator new(n * sizeof(float), std::align_val_t(64)))) {
        std::memset(values, 0, n * sizeof(float));  // touch every page before timing
    }
    ~AlignedFloats() { ::operator delete(values, std::align_val_t(64)); }
    float* data() { return values; }
    float* values;
};

std::vector<std::byte> make_blocks(GgmlType type, std::size_t elements) {
    const ck::TypeInfo& info = *ck::find_type(type);
    std::vector<std::byte> data(elements / info.block_size * info.block_bytes);
    std::mt19937 random(42);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    if (type == GgmlType::f16 || type == GgmlType::bf16) {
        for (std::size_t i = 0; i < elements; ++i) {
            const float v = value(random);
            const std::uint16_t h =
                type == GgmlType::f16 ? ck::kernels::f32_to_f16(v) : ck::kernels::f32_to_bf16(v);
            std::memcpy(data.data() + 2 * i, &h, 2);
        }
        return data;
    }
    for (auto& b : data) b = static_cast<std::byte>(random());
    for (std::size_t b = 0; b < data.size() / info.block_bytes; ++b)
        for (std::size_t offset : cktest::f16_scale_offsets(type)) {
            const std::uint16_t h = ck::kernels::f32_to_f16(value(random) * 0.01f + 0.02f);
            std::memcpy(data.data() + b * info.block_bytes + offset, &h, 2);
        }
    return data;
}

void dequant(benchmark::State& state, GgmlType type, Isa isa, std::size_t out_bytes) {
    if (ck::best_supported_isa(ck::cpu_features()) < isa) {
        state.SkipWithError("variant not supported by this CPU");
        return;
    }
    const std::size_t n = out_bytes / sizeof(float);
    const auto blocks = make_blocks(type, n);
    // 64-byte aligned, as the dequant plugin allocates its outputs: large outputs then take the
    // non-temporal store path.
    AlignedFloats out(n);
    const auto fn = ck::kernels::dequant_table(isa).fn[static_cast<std::uint32_t>(type)];
    for (auto _ : state) {
        fn(blocks.data(), out.data(), n);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(out_bytes));
}

void memset_baseline(benchmark::State& state) {
    AlignedFloats out(large_out / sizeof(float));
    for (auto _ : state) {
        std::memset(out.data(), 0, large_out);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(large_out));
}

int register_all() {
    const GgmlType types[] = {GgmlType::f16,  GgmlType::bf16, GgmlType::q4_0,  GgmlType::q4_1,
                              GgmlType::q5_0, GgmlType::q5_1, GgmlType::q8_0,  GgmlType::q4_k,
                              GgmlType::q5_k, GgmlType::q6_k, GgmlType::iq4_nl};
    for (std::size_t size : {small_out, large_out})
        for (GgmlType type : types)
            for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
                std::string name = std::string(ck::find_type(type)->name) + "/" +
                                   std::string(ck::isa_name(isa)) +
                                   (size == small_out ? "/256KiB" : "/64MiB");
                benchmark::RegisterBenchmark(name.c_str(), dequant, type, isa, size);
            }
    // The types only the scalar reference decodes (the i-quants, Q2_K, Q3_K, ...), cache
    // resident: their kernels are arithmetic-bound, and no SIMD variant stands in for them.
    for (std::uint32_t id = 0; id < ck::ggml_type_count; ++id) {
        const auto type = static_cast<GgmlType>(id);
        if (type == GgmlType::f32 || !ck::kernels::has_own_kernel(Isa::scalar, id) ||
            ck::kernels::has_own_kernel(Isa::avx2, id))
            continue;
        const std::string name = std::string(ck::find_type(id)->name) + "/scalar/256KiB";
        benchmark::RegisterBenchmark(name.c_str(), dequant, type, Isa::scalar, small_out);
    }
    benchmark::RegisterBenchmark("memset/64MiB", memset_baseline);
    return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
