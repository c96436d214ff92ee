// The SIMD quantizers (one block per lane: 256 values, 32 for IQ4_NL) against the scalar
// reference, byte for byte: every variant this CPU runs, every type it implements (Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K, IQ4_NL on x86-64; NEON only has Q2_K, Q4_K and Q5_K), on
// - the <type>.src.f32 inputs of tests/data/types (also checked against ggml's own bytes);
// - 4096 random blocks per distribution mix, fewer under the sanitizers and qemu
//   (cktest::random_block_count): normal at scales 1e-6..1e3, zero sub-blocks, zero blocks,
//   one huge outlier, constants, ties, subnormals, one-signed blocks, non-finite values and
//   per-sub-block mixtures, shuffled so that neighbouring lanes take different paths;
// - every block count from 1 to three lane groups, so each tail length (0..lanes-1) runs;
// - IQ4_NL's edge cases (exact midpoints between table entries, all-equal blocks, negative
//   extremes, blocks around GROUP_MAX_EPS);
// - the weights of ../shared/testdata/micro-llama-f16.gguf, when present.
// A mismatch names the block, byte and field.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/quantize.hpp"
#include "kernel_test_support.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_variants {

namespace {

using ck::GgmlType;
using ck::Isa;
using namespace cktest::kernels;

struct Field {
    const char* name;
    std::size_t begin;
    std::size_t end;
};

struct KType {
    const char* name;  // also the tensor name in types.gguf
    GgmlType type;
    std::size_t block_bytes;
    std::vector<Field> fields;
    std::size_t block_values = 256;
};

const std::vector<KType>& simd_types() {
    static const std::vector<KType> all = {
        {"q2_K",
         GgmlType::q2_k,
         84,
         {{"scales", 0, 16}, {"qs", 16, 80}, {"d", 80, 82}, {"dmin", 82, 84}}},
        {"q3_K",
         GgmlType::q3_k,
         110,
         {{"hmask", 0, 32}, {"qs", 32, 96}, {"scales", 96, 108}, {"d", 108, 110}}},
        {"q4_K",
         GgmlType::q4_k,
         144,
         {{"d", 0, 2}, {"dmin", 2, 4}, {"scales", 4, 16}, {"qs", 16, 144}}},
        {"q5_K",
         GgmlType::q5_k,
         176,
         {{"d", 0, 2}, {"dmin", 2, 4}, {"scales", 4, 16}, {"qh", 16, 48}, {"qs", 48, 176}}},
        {"q6_K",
         GgmlType::q6_k,
         210,
         {{"ql", 0, 128}, {"qh", 128, 192}, {"scales", 192, 208}, {"d", 208, 210}}},
        {"iq4_nl", GgmlType::iq4_nl, 18, {{"d", 0, 2}, {"qs", 2, 18}}, 32},
    };
    return all;
}

bool no_simd() {
    return cktest::kernels::no_simd("quantizers");
}

std::string field_at(const KType& k, std::size_t offset) {
    for (const Field& f : k.fields)
        if (offset >= f.begin && offset < f.end)
            return std::string(f.name) + "[" + std::to_string(offset - f.begin) + "]";
    return "?";
}

// Empty when equal; otherwise the first (up to 3) differing blocks with their first byte, its
// field and both values in hex.
std::string diff(const KType& k, const std::vector<std::byte>& got, const std::byte* want) {
    const auto field_and_values = [&k](std::size_t offset, std::byte g, std::byte w) {
        std::ostringstream s;
        s << " (" << field_at(k, offset) << "): got 0x" << std::hex << std::setw(2)
          << std::setfill('0') << static_cast<unsigned>(g) << ", want 0x" << std::setw(2)
          << static_cast<unsigned>(w);
        return s.str();
    };
    return block_diff(got.data(), want, got.size(), k.block_bytes, field_and_values);
}

// Quantizes x (a whole number of blocks) with the scalar reference, once, and with every
// variant this CPU runs, and compares the bytes.
bool check_same(const KType& k, const float* x, std::size_t n, const std::string& what) {
    if (quantizer_variants(k.type).empty()) return true;  // the dispatch case checks this
    const std::size_t bytes = n / k.block_values * k.block_bytes;
    std::vector<std::byte> want(bytes);
    ck::kernels::reference_quantizer(id(k.type))(x, want.data(), n);
    bool same = true;
    for (Isa isa : quantizer_variants(k.type)) {
        std::vector<std::byte> got(bytes, std::byte{0xA5});
        ck::kernels::quantizer(isa, id(k.type))(x, got.data(), n);
        const std::string problem = diff(k, got, want.data());
        BOOST_TEST(problem.empty(),
                   k.name << " " << ck::isa_name(isa) << " on " << what << ": " << problem);
        same = same && problem.empty();
    }
    return same;
}

// One 256-value block of distribution `kind` (see random_blocks).
void fill_block(int kind, std::mt19937_64& random, float* x) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const float scale = std::pow(10.0f, -6.0f + 9.0f * unit(random));  // 1e-6 .. 1e3
    for (int i = 0; i < 256; ++i) x[i] = scale * normal(random);
    switch (kind) {
        case 0:  // plain normal
            break;
        case 1:  // some sub-blocks (of 16 and of 32) all zero
            for (int j = 0; j < 16; ++j)
                if (random() % 3 == 0)
                    for (int i = 0;
                         i < 16 * (1 + static_cast<int>(random() % 2)) && 16 * j + i < 256; ++i)
                        x[16 * j + i] = 0.0f;
            break;
        case 2:  // all zero, or all -0
            for (int i = 0; i < 256; ++i) x[i] = random() % 2 ? 0.0f : -0.0f;
            break;
        case 3: {  // one huge outlier
            const float mags[] = {1e2f, 1e4f, 1e8f, 1e19f, 1e30f, 3e38f};
            x[random() % 256] = (random() % 2 ? 1.0f : -1.0f) * scale * mags[random() % 6];
            break;
        }
        case 4: {  // constant block, or constant sub-blocks
            const float c = scale * normal(random);
            if (random() % 2) {
                for (int i = 0; i < 256; ++i) x[i] = c;
            } else {
                for (int j = 0; j < 16; ++j) {
                    const float cj = random() % 4 == 0 ? 0.0f : scale * normal(random);
                    for (int i = 0; i < 16; ++i) x[16 * j + i] = cj;
                }
            }
            break;
        }
        case 5: {  // ties: small integers and halves, times a power of two
            const float unit_step = std::ldexp(1.0f, static_cast<int>(random() % 20) - 10);
            for (int i = 0; i < 256; ++i)
                x[i] = unit_step * 0.5f * static_cast<float>(static_cast<int>(random() % 33) - 16);
            break;
        }
        case 6:  // subnormals (and values near GROUP_MAX_EPS)
            for (int i = 0; i < 256; ++i) x[i] = (random() % 2 ? 1e-40f : 1e-15f) * normal(random);
            break;
        case 7:  // one sign only (the min > 0 and max < 0 paths)
            for (int i = 0; i < 256; ++i) x[i] = std::fabs(x[i]);
            if (random() % 2)
                for (int i = 0; i < 256; ++i) x[i] = -x[i];
            if (random() % 2)
                for (int i = 0; i < 256; ++i) x[i] += scale * 3.0f;
            break;
        case 8: {  // non-finite values (deterministic garbage in ggml, kept the same)
            const float specials[] = {
                std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max()};
            x[random() % 256] = specials[random() % 4];
            break;
        }
        default:  // per sub-block mixture of the above
            mix_sub_blocks(fill_block, random, x);
            break;
    }
}

constexpr int kinds = 10;

// 4096 blocks (fewer under the sanitizers and qemu: cktest::random_block_count); block b has
// a random kind, so neighbouring lanes diverge. With `only`, every block has that kind.
std::vector<float> random_blocks(std::uint64_t seed, int only = -1) {
    std::mt19937_64 random(seed);
    const std::size_t blocks = cktest::random_block_count(4096);
    std::vector<float> x(blocks * 256);
    for (std::size_t b = 0; b < blocks; ++b)
        fill_block(only >= 0 ? only : static_cast<int>(random() % kinds), random,
                   x.data() + 256 * b);
    return x;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_variants)

BOOST_AUTO_TEST_CASE(dispatch) {
    for (const KType& k : simd_types()) {
        BOOST_TEST(ck::kernels::best_quantizer(id(k.type)) != nullptr);
        BOOST_TEST(ck::kernels::select_quantizer(id(k.type), Isa::scalar) ==
                   ck::kernels::reference_quantizer(id(k.type)));
        BOOST_TEST(ck::kernels::has_own_quantizer(Isa::avx2, id(k.type)) == cktest::x86_simd_built);
        BOOST_TEST(ck::kernels::has_own_quantizer(Isa::avx512, id(k.type)) ==
                   cktest::x86_simd_built);
        BOOST_TEST(
            ck::kernels::has_own_quantizer(Isa::neon, id(k.type)) == has_neon_quantizer(k.type),
            k.name);
        for (Isa isa : supported_simd())
            BOOST_TEST((ck::kernels::quantizer(isa, id(k.type)) !=
                        ck::kernels::reference_quantizer(id(k.type))) ==
                           (isa != Isa::neon || has_neon_quantizer(k.type)),
                       k.name << " " << ck::isa_name(isa));
        BOOST_TEST(ck::kernels::best_quantizer(id(k.type)) ==
                       ck::kernels::quantizer(cktest::kernels::chosen_isa(), id(k.type)),
                   k.name);
    }
    // Types without a SIMD variant fall back to the reference.
    for (GgmlType t : {GgmlType::q8_0, GgmlType::q4_0, GgmlType::q5_1}) {
        BOOST_TEST(!ck::kernels::has_own_quantizer(Isa::avx512, id(t)));
        BOOST_TEST(ck::kernels::quantizer(Isa::avx512, id(t)) ==
                   ck::kernels::reference_quantizer(id(t)));
        BOOST_TEST(ck::kernels::best_quantizer(id(t)) == ck::kernels::reference_quantizer(id(t)));
    }
    BOOST_TEST(ck::kernels::best_quantizer(id(GgmlType::f32)) == nullptr);
    BOOST_TEST_MESSAGE("best_quantizer variant: " << ck::kernels::best_quantizer_variant());
}

// Every .src.f32 of tests/data/types (8 rows of 1024, the K-quant ones and all the others),
// quantized as one row of 32 blocks so that whole lane groups run; for the type's own input
// also against ggml's bytes in types.gguf.
BOOST_AUTO_TEST_CASE(same_as_scalar_on_the_types_data) {
    if (no_simd()) return;
    const auto dir = cktest::test_data() / "types";
    TestGguf types(dir / "types.gguf");
    std::size_t inputs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string file = entry.path().filename().string();
        if (file.size() < 8 || file.substr(file.size() - 8) != ".src.f32") continue;
        std::vector<float> x = cktest::read_floats(entry.path());
        x.resize(x.size() / 256 * 256);
        if (x.empty()) continue;
        ++inputs;
        for (const KType& k : simd_types()) check_same(k, x.data(), x.size(), file);
    }
    BOOST_TEST(inputs >= 10u);

    for (const KType& k : simd_types()) {
        ck::TensorView view;
        BOOST_TEST_REQUIRE(types.find(k.name, view));
        const std::vector<float> x = cktest::read_floats(dir / (std::string(k.name) + ".src.f32"));
        std::vector<std::byte> got(x.size() / k.block_values * k.block_bytes);
        BOOST_TEST_REQUIRE(view.size() == got.size());
        for (Isa isa : quantizer_variants(k.type)) {
            ck::kernels::quantizer(isa, id(k.type))(x.data(), got.data(), x.size());
            const std::string problem = diff(k, got, view.data());
            BOOST_TEST(problem.empty(),
                       k.name << " " << ck::isa_name(isa) << " against ggml: " << problem);
        }
    }
}

BOOST_AUTO_TEST_CASE(same_as_scalar_on_random_blocks) {
    if (no_simd()) return;
    // A mixture (lanes diverge) and each distribution alone (all lanes on the same path).
    std::vector<std::pair<std::string, std::vector<float>>> sets;
    sets.emplace_back("mixed blocks", random_blocks(20260101));
    for (int kind = 0; kind < kinds; ++kind)
        sets.emplace_back("blocks of kind " + std::to_string(kind),
                          random_blocks(777 + static_cast<std::uint64_t>(kind), kind));
    // Normal values at each decade of scale 1e-6..1e3, 256 blocks each.
    {
        std::mt19937_64 random(99);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> x;
        for (int e = -6; e <= 3; ++e)
            for (int i = 0; i < 256 * 256; ++i)
                x.push_back(std::pow(10.0f, static_cast<float>(e)) * normal(random));
        sets.emplace_back("normal at scales 1e-6..1e3", std::move(x));
    }
    for (const auto& [what, x] : sets)
        for (const KType& k : simd_types()) check_same(k, x.data(), x.size(), what);
}

// 1 .. 3 * 16 + 15 blocks: every tail length for both lane counts, and rows shorter than a group.
BOOST_AUTO_TEST_CASE(tails_use_the_scalar_quantizer) {
    if (no_simd()) return;
    const std::vector<float> x = random_blocks(4242);
    for (std::size_t blocks = 1; blocks < 64; ++blocks)
        for (const KType& k : simd_types())
            check_same(k, x.data() + 256 * (blocks * 7 % (x.size() / 256 - 63)),
                       blocks * k.block_values, std::to_string(blocks) + " blocks");
}

// IQ4_NL's own edge cases, 32-value blocks of random kinds side by side: values exactly on the
// midpoints between table entries (times a power of two, with the extreme at +-127 times it,
// so that the search's grids hit the ties exactly), values exactly on table entries, all-equal
// blocks, blocks whose signed extreme is negative, and tiny blocks around GROUP_MAX_EPS.
BOOST_AUTO_TEST_CASE(iq4_nl_edge_cases) {
    if (no_simd()) return;
    const KType* iq4 = nullptr;
    for (const KType& k : simd_types())
        if (k.type == GgmlType::iq4_nl) iq4 = &k;
    BOOST_TEST_REQUIRE(iq4 != nullptr);
    if (quantizer_variants(iq4->type).empty()) {
        BOOST_TEST_MESSAGE("no IQ4_NL quantizer variant on this CPU (decision 0065)");
        return;
    }
    constexpr int table[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                               1,    13,   25,  38,  53,  69,  89,  113};
    std::mt19937_64 random(31337);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    constexpr int kinds_iq4 = 8;
    for (int only = -1; only < kinds_iq4; ++only) {
        std::vector<float> x(4096 * 32);
        for (std::size_t b = 0; b < 4096; ++b) {
            float* const v = x.data() + 32 * b;
            const int kind = only >= 0 ? only : static_cast<int>(random() % kinds_iq4);
            const float s = std::ldexp(1.0f, static_cast<int>(random() % 40) - 20);
            const float sign = random() % 2 ? 1.0f : -1.0f;
            switch (kind) {
                case 0:  // midpoints (and their negatives), the extreme at +-127 s
                    for (int j = 0; j < 32; ++j) {
                        const int k = 1 + static_cast<int>(random() % 15);
                        const float mid = 0.5f * static_cast<float>(table[k - 1] + table[k]);
                        v[j] = (random() % 2 ? 1.0f : -1.0f) * mid * s;
                    }
                    v[random() % 32] = sign * 127.0f * s;
                    break;
                case 1:  // table entries times s (the fit is exact), some midpoints
                    for (int j = 0; j < 32; ++j) {
                        const int k = static_cast<int>(random() % 16);
                        v[j] = random() % 4 == 0
                                   ? 0.5f *
                                         static_cast<float>(table[k == 0 ? 0 : k - 1] + table[k]) *
                                         s
                                   : static_cast<float>(table[k]) * s;
                    }
                    break;
                case 2: {  // all equal (zero, -0, positive or negative)
                    const float c =
                        random() % 4 == 0 ? (random() % 2 ? 0.0f : -0.0f) : s * normal(random);
                    for (int j = 0; j < 32; ++j) v[j] = c;
                    break;
                }
                case 3:  // the signed extreme negative
                    for (int j = 0; j < 32; ++j) v[j] = s * normal(random);
                    v[random() % 32] = -8.0f * s;
                    if (random() % 2)
                        for (int j = 0; j < 32; ++j) v[j] = -std::fabs(v[j]);
                    break;
                case 4: {  // tiny: below, at and just above GROUP_MAX_EPS, or subnormal
                    const float eps = 1e-15f;
                    const float edges[] = {std::nextafter(eps, 0.0f), eps,
                                           std::nextafter(eps, 1.0f), 1e-16f, 1e-40f};
                    for (int j = 0; j < 32; ++j) v[j] = 1e-17f * normal(random);
                    v[random() % 32] = sign * edges[random() % 5];
                    break;
                }
                case 6:
                    // 24 values -127 s, then 8 at -4.5 s (the midpoint between -10 and 1):
                    // their weighted terms are absorbed in the sums, the fitted scale is s
                    // exactly, and the final encoding meets the midpoint exactly.
                    for (int j = 0; j < 32; ++j) v[j] = (j < 24 ? -127.0f : -4.5f) * s;
                    break;
                case 5:  // ties in magnitude: +-c, the first one found wins
                    for (int j = 0; j < 32; ++j)
                        v[j] = static_cast<float>(static_cast<int>(random() % 9) - 4) * s;
                    break;
                default:  // plain normal
                    for (int j = 0; j < 32; ++j) v[j] = s * normal(random);
                    break;
            }
        }
        check_same(*iq4, x.data(), x.size(),
                   only < 0 ? std::string("mixed edge blocks")
                            : "edge blocks of kind " + std::to_string(only));
    }
}

// Real weights: every tensor of micro-llama-f16.gguf, widened to f32.
BOOST_AUTO_TEST_CASE(same_as_scalar_on_real_weights,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    if (no_simd()) return;
    TestGguf micro(*cktest::shared_data() / "micro-llama-f16.gguf");
    const auto& widen = ck::kernels::scalar_dequant_table();
    std::size_t tensors = 0;
    for (std::size_t i = 0; i < micro.header.tensors.size(); ++i) {
        const ck::TensorInfo& info = micro.header.tensors[i];
        if (info.elements() % 256 != 0 || !widen.fn[info.type]) continue;
        std::vector<float> x(info.elements());
        widen.fn[info.type](micro.reader.tensor(i).data(), x.data(), x.size());
        ++tensors;
        for (const KType& k : simd_types()) check_same(k, x.data(), x.size(), info.name);
    }
    BOOST_TEST(tensors > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_quantize_variants
