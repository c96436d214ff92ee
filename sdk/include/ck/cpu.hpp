// CPU feature detection (CPUID + XGETBV) and the choice of a kernel variant.
#pragma once

#include <optional>
#include <string_view>

#include "ck/export.hpp"

namespace ck {

struct CpuFeatures {
    bool sse2 = false, ssse3 = false, sse41 = false, sse42 = false;
    bool avx = false, avx2 = false, fma = false, f16c = false, bmi2 = false;
    bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
    bool avx512_bf16 = false;
    bool os_avx = false;     // the OS saves YMM state (XCR0 bits 1, 2)
    bool os_avx512 = false;  // the OS saves ZMM and opmask state (XCR0 bits 5, 6, 7)
};

// Detected once; a feature counts only when the OS has enabled its register state.
CK_SDK_API const CpuFeatures& cpu_features() noexcept;

// Kernel variants in increasing order of what they need: scalar on every CPU, then x86-64's
// avx2 < avx512, and ARM64's neon (every ARM64 CPU has it). An ISA of the other architecture
// is never run: asked for, it means scalar.
enum class Isa { scalar = 0, avx2 = 1, avx512 = 2, neon = 3 };

CK_SDK_API std::string_view isa_name(Isa isa) noexcept;
CK_SDK_API std::optional<Isa> isa_from_name(std::string_view name) noexcept;
// Best variant this CPU runs: avx2 needs AVX2+FMA+F16C, avx512 needs F/BW/DQ/VL as well; on
// ARM64, neon (part of the architecture).
CK_SDK_API Isa best_supported_isa(const CpuFeatures& cpu) noexcept;
// The variant a plugin should use: the best supported, lowered by CKHOST_ISA when set (the
// host's --isa flag sets that variable before it loads any plugin). Never raised above what
// the CPU supports. An ISA of another architecture selects scalar.
CK_SDK_API Isa selected_isa() noexcept;
// True when `isa` belongs to the architecture this build is for (scalar always does).
CK_SDK_API bool isa_of_this_architecture(Isa isa) noexcept;
// The best variant this CPU runs that is not above `limit`; scalar when `limit` belongs to
// another architecture. What every kernel family's selection uses.
CK_SDK_API Isa best_isa_within(Isa limit) noexcept;

}  // namespace ck
