// Helpers the kernel suites share: which SIMD variants this CPU runs, byte-for-byte comparison of
// quantized blocks, the GGUF files of tests/data, and the checks every weighted-quantizer variant
// suite makes. Inline and in a namespace of their own: the suites are compiled in unity batches
// (tests/CMakeLists.txt), where one file's names are its batch's.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ck/context.hpp"
#include "ck/cpu.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

namespace cktest::kernels {

// The kernels' tables and dispatchers take a type as its GGML number.
inline std::uint32_t id(ck::GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

inline ck::Isa best_isa() {
    return ck::best_supported_isa(ck::cpu_features());
}

// The ISA the best_* dispatchers choose: the best this CPU runs, within ck::selected_isa().
inline ck::Isa chosen_isa() {
    return ck::best_isa_within(ck::selected_isa());
}

// The x86-64 SIMD variants this CPU runs; empty without AVX2 (and on ARM64).
inline std::vector<ck::Isa> supported_x86_simd() {
    std::vector<ck::Isa> out;
    const ck::Isa best = best_isa();
    if (best == ck::Isa::neon) return out;
    if (best >= ck::Isa::avx2) out.push_back(ck::Isa::avx2);
    if (best >= ck::Isa::avx512) out.push_back(ck::Isa::avx512);
    return out;
}

// The SIMD variants this CPU runs: AVX2 and AVX-512 on x86-64, NEON on ARM64 (for the families
// that have NEON kernels: dequant, narrowing, the K-quant and weighted K-quant quantizers).
inline std::vector<ck::Isa> supported_simd() {
    if (best_isa() == ck::Isa::neon) return {ck::Isa::neon};
    return supported_x86_simd();
}

// True when there is no variant to compare with the scalar code, which the log then says (a
// skip the reader of a CI log should see): `scalar_kernels` names what runs alone ("quantizers").
inline bool no_simd(const std::string& scalar_kernels) {
    if (!supported_simd().empty()) return false;
    BOOST_TEST_MESSAGE("this CPU has no AVX2 or NEON: only the scalar " << scalar_kernels
                                                                        << " run here");
    return true;
}

// The same for the families whose only variants are x86-64's (repack, the IQ1-IQ3 searches).
inline bool no_x86_simd(const std::string& scalar_kernels) {
    if (!supported_x86_simd().empty()) return false;
    BOOST_TEST_MESSAGE("no AVX2 variant here: only the scalar " << scalar_kernels << " run");
    return true;
}

// The types with a NEON quantizer, with importance weights or without: Q2_K, Q4_K and Q5_K,
// whose lanes execute under half the scalar instructions. Q3_K, Q6_K, IQ4_NL and IQ4_XS execute
// more in lanes than in the scalar search and have none (docs/platforms.md), nor have the IQ1-IQ3
// grid searches.
inline bool has_neon_quantizer(ck::GgmlType t) {
    using ck::GgmlType;
    return cktest::neon_built &&
           (t == GgmlType::q2_k || t == GgmlType::q4_k || t == GgmlType::q5_k);
}

// The variants of supported_simd() with a quantizer of their own for `t`; the others would give
// the scalar code itself.
inline std::vector<ck::Isa> quantizer_variants(ck::GgmlType t) {
    std::vector<ck::Isa> out;
    for (const ck::Isa isa : supported_simd())
        if (isa != ck::Isa::neon || has_neon_quantizer(t)) out.push_back(isa);
    return out;
}

// How a differing byte is shown after "block B byte I": its offset in the block and both values.
using DescribeByte = std::function<std::string(std::size_t offset, std::byte got, std::byte want)>;

inline std::string decimal_bytes(std::size_t, std::byte got, std::byte want) {
    return ": got " + std::to_string(static_cast<unsigned>(got)) + ", want " +
           std::to_string(static_cast<unsigned>(want));
}

// Empty when the `bytes` bytes are equal; otherwise the first (up to 3) differing blocks of
// block_bytes with their first differing byte, and how many blocks differ.
inline std::string block_diff(const std::byte* got, const std::byte* want, std::size_t bytes,
                              std::size_t block_bytes,
                              const DescribeByte& describe = decimal_bytes) {
    if (std::memcmp(got, want, bytes) == 0) return {};
    std::ostringstream s;
    std::size_t bad = 0;
    for (std::size_t b = 0; b < bytes / block_bytes; ++b) {
        const std::byte* g = got + b * block_bytes;
        const std::byte* w = want + b * block_bytes;
        if (std::memcmp(g, w, block_bytes) == 0) continue;
        if (++bad > 3) continue;
        std::size_t i = 0;
        while (g[i] == w[i]) ++i;
        s << (bad > 1 ? "; " : "") << "block " << b << " byte " << i << describe(i, g[i], w[i]);
    }
    s << " (" << bad << " of " << bytes / block_bytes << " blocks differ)";
    return s.str();
}

// A GGUF file opened for reading, its tensors found by name.
struct TestGguf {
    explicit TestGguf(std::filesystem::path file) : path(std::move(file)) {}

    std::filesystem::path path;
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader{context};
    ck::ModelHeader header = reader.open(path);

    // header.tensors.size() when there is none.
    std::size_t index_of(const std::string& name) const {
        for (std::size_t i = 0; i < header.tensors.size(); ++i)
            if (header.tensors[i].name == name) return i;
        return header.tensors.size();
    }
    // The tensor `name` into view; false when there is none.
    bool find(const std::string& name, ck::TensorView& view) {
        const std::size_t i = index_of(name);
        if (i == header.tensors.size()) return false;
        view = reader.tensor(i);
        return true;
    }
    // The f32 tensor `name`; fails the test when there is none.
    std::vector<float> floats(const std::string& name) {
        ck::TensorView view;
        BOOST_TEST_REQUIRE(find(name, view), path.filename().string() << " has no " << name);
        std::vector<float> out(view.size() / sizeof(float));
        ck::le::load_array(view.data(), out.data(), out.size());
        return out;
    }
};

// ggml's inputs and outputs for every type (tests/data/types).
inline std::filesystem::path types_gguf() {
    return cktest::test_data() / "types" / "types.gguf";
}

// ggml's weighted quantizers' rows, weights and bytes (tests/data/weighted).
inline std::filesystem::path weighted_gguf() {
    return cktest::test_data() / "weighted" / "weighted.gguf";
}

// ---- Random inputs ------------------------------------------------------------------------

inline float pick(std::mt19937_64& random, std::initializer_list<float> choices) {
    return choices.begin()[random() % choices.size()];
}

// Writes 256 values of one kind into x.
using FillBlock = void (*)(int kind, std::mt19937_64& random, float* x);

// 256 values in sub-blocks of 16, each from a block `fill` makes of one of its first 8 kinds:
// neighbouring sub-blocks take different paths.
inline void mix_sub_blocks(FillBlock fill, std::mt19937_64& random, float* x) {
    for (int j = 0; j < 16; ++j) {
        float sub[256];
        fill(static_cast<int>(random() % 8), random, sub);
        std::memcpy(x + 16 * j, sub + 16 * j, 16 * sizeof(float));
    }
}

struct ValuesAndWeights {
    std::vector<float> x, w;
};

// weighted.gguf's rows (`src`, one after another) and their weights (`weights`), as many of each.
inline ValuesAndWeights weighted_rows(TestGguf& weighted) {
    ValuesAndWeights rows{weighted.floats("src"), weighted.floats("weights")};
    BOOST_TEST_REQUIRE(rows.x.size() == rows.w.size());
    return rows;
}

// ---- Weighted quantizer variants ----------------------------------------------------------

struct WeightedType {
    const char* name;  // as in weighted.gguf
    ck::GgmlType type;
    std::size_t block_bytes;
    std::size_t block_values = 256;
};

// What the scalar weighted quantizer writes for n values (weights w, or nullptr).
inline std::vector<std::byte> scalar_weighted_bytes(const WeightedType& k, const float* x,
                                                    const float* w, std::size_t n) {
    std::vector<std::byte> bytes(n / k.block_values * k.block_bytes);
    ck::kernels::weighted_quantizer(id(k.type))(x, bytes.data(), n, w);
    return bytes;
}

// Quantizes n values (weights w, or nullptr) with the variant and compares its bytes with the
// scalar quantizer's (`want`); the variant must not write past the row's blocks.
inline bool check_weighted_variant(ck::Isa isa, const WeightedType& k, const float* x,
                                   const float* w, std::size_t n,
                                   const std::vector<std::byte>& want, const std::string& what) {
    const std::size_t bytes = want.size();
    std::vector<std::byte> got(bytes + 64, std::byte{0xA5});
    ck::kernels::weighted_quantizer(isa, id(k.type))(x, got.data(), n, w);
    std::string problem = block_diff(got.data(), want.data(), bytes, k.block_bytes);
    for (std::size_t i = bytes; i < got.size(); ++i)
        if (got[i] != std::byte{0xA5}) problem += " wrote past the row";
    BOOST_TEST(problem.empty(), k.name << " " << ck::isa_name(isa) << (w ? "" : " without weights")
                                       << " on " << what << ": " << problem);
    return problem.empty();
}

// Quantizes n values with the variant and compares its bytes with ggml's.
inline void check_weighted_against_ggml(ck::Isa isa, const WeightedType& k, const float* x,
                                        const float* w, std::size_t n, const std::byte* ggml,
                                        const std::string& what) {
    std::vector<std::byte> got(n / k.block_values * k.block_bytes);
    ck::kernels::weighted_quantizer(isa, id(k.type))(x, got.data(), n, w);
    const std::string problem = block_diff(got.data(), ggml, got.size(), k.block_bytes);
    BOOST_TEST(problem.empty(), k.name << (w ? ".weighted " : ".plain ") << ck::isa_name(isa) << " "
                                       << what << " against ggml: " << problem);
}

// A type with SIMD weighted quantizers: the scalar one is the reference, AVX2 and AVX-512 each
// have their own, and the best is the chosen ISA's.
inline void check_weighted_dispatch(const WeightedType& k) {
    using ck::Isa;
    using ck::kernels::weighted_quantizer;
    const std::uint32_t t = id(k.type);
    BOOST_TEST(weighted_quantizer(Isa::scalar, t) == weighted_quantizer(t));
    // Without SIMD units (another target than x86-64) every ISA gets the scalar quantizer.
    for (Isa isa : {Isa::avx2, Isa::avx512}) {
        BOOST_TEST(ck::kernels::has_own_weighted_quantizer(isa, t) == cktest::x86_simd_built,
                   k.name << " " << ck::isa_name(isa));
        BOOST_TEST((weighted_quantizer(isa, t) != weighted_quantizer(t)) == cktest::x86_simd_built);
    }
    if (cktest::x86_simd_built)
        BOOST_TEST(weighted_quantizer(Isa::avx2, t) != weighted_quantizer(Isa::avx512, t));
    BOOST_TEST(ck::kernels::has_own_weighted_quantizer(Isa::neon, t) == has_neon_quantizer(k.type),
               k.name << " neon");
    BOOST_TEST(ck::kernels::best_weighted_quantizer(t) == weighted_quantizer(chosen_isa(), t),
               k.name);
}

}  // namespace cktest::kernels
