// Runs one kernel once on `blocks` blocks of generated input, for counting instructions under
// an emulator (kernels/bench/neon_insn_counts.sh): NEON throughput cannot be timed under qemu,
// so the script compares the instructions each variant executes per block instead. No timing
// and no output: what is measured is the run itself. With `dry` the input is made the same way
// and the kernel is not run, so that the difference between the two runs is the kernel alone.
//
//   kernel_probe dequant|quantize|weighted|narrow TYPE ISA BLOCKS [dry]
//   (TYPE a ggml name such as q4_K, or f16 / bf16 for narrow; ISA scalar, neon, avx2, avx512)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
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

// Blocks of `type` that decode to ordinary values: the scalar quantizer's output.
std::vector<std::byte> blocks_of(const ck::TypeInfo& type, std::size_t blocks) {
    const std::vector<float> x = normal_values(blocks * type.block_size);
    std::vector<std::byte> out(blocks * type.block_bytes);
    if (const auto quantize = ck::kernels::reference_quantizer(type.id))
        quantize(x.data(), out.data(), x.size());
    else  // F16 / BF16: the scalar narrowing
        (type.id == static_cast<std::uint32_t>(ck::GgmlType::bf16)
             ? ck::kernels::scalar_narrow_table().to_bf16
             : ck::kernels::scalar_narrow_table().to_f16)(
            x.data(), reinterpret_cast<std::uint16_t*>(out.data()), x.size());
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5 && !(argc == 6 && std::string(argv[5]) == "dry")) return usage();
    const bool dry = argc == 6;
    const std::string kind = argv[1];
    const ck::TypeInfo* type = ck::find_type(std::string_view(argv[2]));
    const auto isa = ck::isa_from_name(argv[3]);
    const auto blocks = static_cast<std::size_t>(std::strtoull(argv[4], nullptr, 10));
    if (!type || !isa) return usage();
    const std::size_t n = blocks * type->block_size;
    if (kind == "dequant") {
        const std::vector<std::byte> in = blocks_of(*type, blocks);
        std::vector<float> out(n);
        if (!dry) ck::kernels::dequant_table(*isa).fn[type->id](in.data(), out.data(), n);
        volatile float sink = out.empty() ? 0.0f : out[0];  // keeps the work observable
        (void)sink;
        return 0;
    }
    const std::vector<float> x = normal_values(n);
    std::vector<std::byte> out(blocks * type->block_bytes + 1);
    std::vector<float> weights(n, 1.0f);
    if (kind != "quantize" && kind != "weighted" && kind != "narrow") return usage();
    if (dry) return 0;
    if (kind == "quantize") {
        ck::kernels::quantizer(*isa, type->id)(x.data(), out.data(), n);
    } else if (kind == "weighted") {
        ck::kernels::weighted_quantizer(*isa, type->id)(x.data(), out.data(), n, weights.data());
    } else if (kind == "narrow") {
        const ck::kernels::NarrowTable& t = ck::kernels::narrow_table(*isa);
        (type->id == static_cast<std::uint32_t>(ck::GgmlType::bf16) ? t.to_bf16 : t.to_f16)(
            x.data(), reinterpret_cast<std::uint16_t*>(out.data()), n);
    }
    volatile std::byte sink = out[0];  // keeps the work observable
    (void)sink;
    return 0;
}
