#include "ck/cpu.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ck {
namespace {

#if defined(__x86_64__) || defined(__i386__)
std::uint64_t read_xcr0() {
    std::uint32_t eax = 0, edx = 0;
    // xgetbv with ecx = 0, written as bytes so no -mxsave flag is needed for this file.
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
    return (std::uint64_t(edx) << 32) | eax;
}

CpuFeatures detect() {
    CpuFeatures f;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    f.sse2 = d & (1u << 26);
    f.ssse3 = c & (1u << 9);
    f.sse41 = c & (1u << 19);
    f.sse42 = c & (1u << 20);
    f.fma = c & (1u << 12);
    f.f16c = c & (1u << 29);
    const bool osxsave = c & (1u << 27);
    const bool cpu_avx = c & (1u << 28);
    if (osxsave) {
        std::uint64_t xcr0 = read_xcr0();
        f.os_avx = (xcr0 & 0x6) == 0x6;
        f.os_avx512 = f.os_avx && (xcr0 & 0xe0) == 0xe0;
    }
    f.avx = cpu_avx && f.os_avx;
    f.fma = f.fma && f.os_avx;
    f.f16c = f.f16c && f.os_avx;
    unsigned max_leaf = __get_cpuid_max(0, nullptr);
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        f.avx2 = f.os_avx && (b & (1u << 5));
        f.bmi2 = b & (1u << 8);
        f.avx512f = f.os_avx512 && (b & (1u << 16));
        f.avx512dq = f.os_avx512 && (b & (1u << 17));
        f.avx512bw = f.os_avx512 && (b & (1u << 30));
        f.avx512vl = f.os_avx512 && (b & (1u << 31));
        __cpuid_count(7, 1, a, b, c, d);
        f.avx512_bf16 = f.os_avx512 && (a & (1u << 5));
    }
    return f;
}
#else
CpuFeatures detect() {
    return {};
}
#endif

}  // namespace

const CpuFeatures& cpu_features() noexcept {
    static const CpuFeatures features = detect();
    return features;
}

std::string_view isa_name(Isa isa) noexcept {
    switch (isa) {
        case Isa::avx2:
            return "avx2";
        case Isa::avx512:
            return "avx512";
        case Isa::neon:
            return "neon";
        default:
            return "scalar";
    }
}

std::optional<Isa> isa_from_name(std::string_view name) noexcept {
    if (name == "scalar") return Isa::scalar;
    if (name == "avx2") return Isa::avx2;
    if (name == "avx512") return Isa::avx512;
    if (name == "neon") return Isa::neon;
    return std::nullopt;
}

bool isa_of_this_architecture(Isa isa) noexcept {
#if defined(__aarch64__)
    return isa == Isa::scalar || isa == Isa::neon;
#elif defined(__x86_64__) || defined(__i386__)
    return isa != Isa::neon;
#else
    return isa == Isa::scalar;
#endif
}

Isa best_supported_isa([[maybe_unused]] const CpuFeatures& cpu) noexcept {
#if defined(__aarch64__)
    return Isa::neon;  // Advanced SIMD is part of every ARM64 CPU
#endif
    const bool avx2 = cpu.avx2 && cpu.fma && cpu.f16c;
    if (avx2 && cpu.avx512f && cpu.avx512bw && cpu.avx512dq && cpu.avx512vl) return Isa::avx512;
    if (avx2) return Isa::avx2;
    return Isa::scalar;
}

Isa best_isa_within(Isa limit) noexcept {
    if (!isa_of_this_architecture(limit)) return Isa::scalar;
    return std::min(best_supported_isa(cpu_features()), limit);
}

Isa selected_isa() noexcept {
    if (const char* env = std::getenv("CKHOST_ISA")) {
        if (auto forced = isa_from_name(env)) return best_isa_within(*forced);
    }
    return best_supported_isa(cpu_features());
}

}  // namespace ck
