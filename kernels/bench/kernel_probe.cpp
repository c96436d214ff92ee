// Runs one kernel once on `blocks` blocks of generated input, for counting instructions under
// an emulator (kernels/bench/neon_insn_counts.sh): NEON throughput cannot be timed under qemu,
// so the script compares the instructions each variant executes per block instead. No timing
// and no output: what is measured is the run itself. With `dry` the input is made the same way
// and the kernel is not run, so that the difference between the two runs is the kernel alone.
//
//   kernel_probe dequant|quantize|weighted|narrow TYPE ISA BLOCKS [dry]
//   (TYPE a ggml name such as q4_K, or f16 / bf16 for narrow; ISA scalar, neon, avx2, avx512)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/kernels/quantize_weighted.hpp"

namespace {

int usage() {
    std::fprintf(stderr,
                 "usage: kernel_probe dequant|quantize|weighted|narrow TYPE ISA BLOCKS [dry]\n");
    return 2;
}

std::vector<float> normal_values(std::size_t n) {
    std::vector<float> x(n);
    std::mt19937 random(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& f : x) f = normal(random);
    return x;
}

// Blocks of `type` that decode to ordinary values: the scalar quantizer's output (the weighted
// one, without weights, for types llama-quantize makes only so, such as IQ4_XS).
std::vector<std::byte> blocks_of(const ck::TypeInfo& type, std::size_t blocks) {
    namespace k = ck::kernels;
    const std::vector<float> x = normal_values(blocks * type.block_size);
    std::vector<std::byte> out(blocks * type.block_bytes);
    if (const auto quantize = k::reference_quantizer(type.id))
        quantize(x.data(), out.data(), x.size());
    else if (const auto weighted = k::weighted_quantizer(type.id))
        weighted(x.data(), out.data(), x.size(), nullptr);
    else if (type.block_bytes == 2)  // F16 / BF16: the scalar narrowing
        (type.id == static_cast<std::uint32_t>(ck::GgmlType::bf16)
             ? k::scalar_narrow_table().to_bf16
             : k::scalar_narrow_table().to_f16)(
            x.data(), reinterpret_cast<std::uint16_t*>(out.data()), x.size());
    else
        throw std::runtime_error("no quantizer makes blocks of " + std::string(type.name));
    return out;
}

// The kernel `kind` names for `type` and `isa`, as a call on (values, blocks, n): looked up
// (its table built) before the measured difference, in dry runs too.
using Run = std::function<void(const float*, const std::byte*, std::byte*, std::size_t)>;

Run kernel_of(const std::string& kind, const ck::TypeInfo& type, ck::Isa isa) {
    namespace k = ck::kernels;
    const bool bf16 = type.id == static_cast<std::uint32_t>(ck::GgmlType::bf16);
    if (kind == "dequant") {
        const k::DequantFn fn = k::dequant_table(isa).fn[type.id];
        return [fn](const float*, const std::byte* in, std::byte* out, std::size_t n) {
            fn(in, reinterpret_cast<float*>(out), n);
        };
    }
    if (kind == "quantize") {
        const k::QuantizeRowFn fn = k::quantizer(isa, type.id);
        return [fn](const float* x, const std::byte*, std::byte* out, std::size_t n) {
            fn(x, out, n);
        };
    }
    if (kind == "weighted") {
        const k::WeightedQuantizeRowFn fn = k::weighted_quantizer(isa, type.id);
        return [fn](const float* x, const std::byte*, std::byte* out, std::size_t n) {
            const std::vector<float> weights(n, 1.0f);
            fn(x, out, n, weights.data());
        };
    }
    if (kind == "narrow") {
        const k::NarrowFn fn = bf16 ? k::narrow_table(isa).to_bf16 : k::narrow_table(isa).to_f16;
        return [fn](const float* x, const std::byte*, std::byte* out, std::size_t n) {
            fn(x, reinterpret_cast<std::uint16_t*>(out), n);
        };
    }
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5 && !(argc == 6 && std::string(argv[5]) == "dry")) return usage();
    const bool dry = argc == 6;
    const ck::TypeInfo* type = ck::find_type(std::string_view(argv[2]));
    const auto isa = ck::isa_from_name(argv[3]);
    const auto blocks = static_cast<std::size_t>(std::strtoull(argv[4], nullptr, 10));
    if (!type || !isa) return usage();
    const Run run = kernel_of(argv[1], *type, *isa);
    if (!run) return usage();
    const std::size_t n = blocks * type->block_size;
    // Both inputs are made whatever the kind, so that the dry run does the same work.
    const std::vector<std::byte> blocks_in = blocks_of(*type, blocks);
    const std::vector<float> x = normal_values(n);
    std::vector<std::byte> out(std::max(n * sizeof(float), blocks * type->block_bytes) + 1);
    if (!dry) run(x.data(), blocks_in.data(), out.data(), n);
    volatile std::byte sink = out[0];  // keeps the work observable
    (void)sink;
    return 0;
}
