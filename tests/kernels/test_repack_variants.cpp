// Every repack path of every SIMD variant this CPU runs gives the scalar reference's bytes and
// accuracy figures exactly (memcmp), on the ggml test data and on random blocks with extreme
// scales and special values.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "block_scales.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/repack.hpp"
#include "ck/support/little_endian.hpp"
#include "kernel_test_support.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_repack_variants {

namespace {

using ck::GgmlType;
using ck::Isa;
using ck::kernels::RepackTarget;
using namespace cktest::kernels;

struct Path {
    GgmlType from;
    RepackTarget to;
};

const Path paths[] = {
    {GgmlType::q8_0, RepackTarget::int8}, {GgmlType::q4_k, RepackTarget::int8},
    {GgmlType::q5_k, RepackTarget::int8}, {GgmlType::q6_k, RepackTarget::int8},
    {GgmlType::f32, RepackTarget::int8},  {GgmlType::f16, RepackTarget::int8},
    {GgmlType::bf16, RepackTarget::int8}, {GgmlType::q4_0, RepackTarget::nf4},
    {GgmlType::f32, RepackTarget::nf4},   {GgmlType::f16, RepackTarget::nf4},
    {GgmlType::bf16, RepackTarget::nf4},
};

const char* target_name(RepackTarget t) {
    return t == RepackTarget::int8 ? "int8" : "nf4";
}

struct Output {
    std::vector<std::uint8_t> codes;
    std::vector<std::uint16_t> scales;
    ck::kernels::RepackError error;
};

Output run(const ck::kernels::RepackTable& table, Path path, const std::vector<std::byte>& source,
           std::size_t n) {
    Output out;
    out.codes.resize(ck::kernels::code_bytes(path.to, n));
    out.scales.resize(ck::kernels::scale_count(path.to, n));
    table.find(id(path.from), path.to)(source.data(), n, out.codes.data(), out.scales.data(),
                                       out.error);
    return out;
}

void check_same(Isa isa, Path path, const std::vector<std::byte>& source, std::size_t n,
                const std::string& what) {
    const Output want = run(ck::kernels::scalar_repack_table(), path, source, n);
    const Output got = run(ck::kernels::repack_table(isa), path, source, n);
    const std::string name = std::string(ck::find_type(path.from)->name) + " -> " +
                             target_name(path.to) + " " + std::string(ck::isa_name(isa)) + " on " +
                             what;
    for (std::size_t i = 0; i < want.codes.size(); ++i)
        if (want.codes[i] != got.codes[i]) {
            BOOST_ERROR(name << ": code byte " << i << " is " << int(got.codes[i])
                             << ", scalar gives " << int(want.codes[i]));
            break;
        }
    for (std::size_t i = 0; i < want.scales.size(); ++i)
        if (want.scales[i] != got.scales[i]) {
            BOOST_ERROR(name << ": scale " << i << " is 0x" << std::hex << got.scales[i]
                             << ", scalar gives 0x" << want.scales[i]);
            break;
        }
    // The figures too, bit for bit (NaN sums compare equal by their bits).
    auto same = [](double a, double b) {
        return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
    };
    BOOST_TEST(same(want.error.squared_error, got.error.squared_error),
               name << ": " << want.error.squared_error << " vs " << got.error.squared_error);
    BOOST_TEST(same(want.error.squared_source, got.error.squared_source),
               name << ": " << want.error.squared_source << " vs " << got.error.squared_source);
    BOOST_TEST(std::bit_cast<std::uint32_t>(want.error.max_abs_error) ==
                   std::bit_cast<std::uint32_t>(got.error.max_abs_error),
               name);
    BOOST_TEST(want.error.elements == n);
    BOOST_TEST(got.error.elements == n);
}

std::vector<std::byte> random_source(GgmlType type, std::size_t n, std::mt19937_64& random) {
    const ck::TypeInfo& info = *ck::find_type(type);
    std::vector<std::byte> data(n / info.block_size * info.block_bytes);
    for (auto& b : data) b = static_cast<std::byte>(random());
    // f16 scales: zero, -zero, subnormals, the largest normal, infinities, NaNs, ordinary ones
    // (the ordinary ones most often, so most blocks produce real codes).
    const std::uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x7bff, 0x7c00,
                                      0xfc00, 0x7e00, 0x7d01, 0x3c00, 0x2e66, 0x1800,
                                      0x2400, 0xa400, 0x2000, 0x1c00};
    const std::size_t blocks = n / info.block_size;
    for (std::size_t b = 0; b < blocks; ++b)
        for (std::size_t offset : cktest::f16_scale_offsets(type)) {
            const std::uint16_t s = specials[random() % std::size(specials)];
            ck::le::store(data.data() + b * info.block_bytes + offset, s);
        }
    if (type == GgmlType::f32 || type == GgmlType::f16 || type == GgmlType::bf16) {
        // Floats: mostly ordinary values, with specials sprinkled in.
        std::normal_distribution<float> gaussian(0.0f, 1.0f);
        const float special_values[] = {0.0f,
                                        -0.0f,
                                        1e-40f,
                                        -1e-40f,
                                        65504.0f,
                                        1e6f,
                                        std::numeric_limits<float>::infinity(),
                                        -std::numeric_limits<float>::infinity(),
                                        std::numeric_limits<float>::quiet_NaN()};
        for (std::size_t i = 0; i < n; ++i) {
            float v = gaussian(random) * (random() % 2 ? 1.0f : 0.001f);
            if (random() % 97 == 0) v = special_values[random() % std::size(special_values)];
            if (type == GgmlType::f32) {
                ck::le::store(data.data() + 4 * i, v);
            } else {
                const std::uint16_t h = type == GgmlType::f16 ? ck::kernels::f32_to_f16(v)
                                                              : ck::kernels::f32_to_bf16(v);
                ck::le::store(data.data() + 2 * i, h);
            }
        }
    }
    return data;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(repack_variants)

BOOST_AUTO_TEST_CASE(every_variant_has_every_path) {
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
        if (isa != Isa::scalar && std::ranges::count(supported_x86_simd(), isa) == 0) continue;
        const auto& table = ck::kernels::repack_table(isa);
        BOOST_TEST((table.isa == isa));
        for (Path p : paths)
            BOOST_TEST(table.find(id(p.from), p.to) != nullptr,
                       ck::isa_name(isa) << " lacks " << ck::find_type(p.from)->name);
        // And nothing else: no Q4_0 -> Int8, no Q8_0 -> NF4, no K-quant -> NF4.
        BOOST_TEST(table.find(id(GgmlType::q4_0), RepackTarget::int8) == nullptr);
        BOOST_TEST(table.find(id(GgmlType::q8_0), RepackTarget::nf4) == nullptr);
        BOOST_TEST(table.find(id(GgmlType::q4_k), RepackTarget::nf4) == nullptr);
        BOOST_TEST(table.find(id(GgmlType::q5_0), RepackTarget::int8) == nullptr);
    }
}

BOOST_AUTO_TEST_CASE(same_as_scalar_on_ggml_test_data) {
    if (no_x86_simd("kernels")) return;
    TestGguf types(types_gguf());
    std::size_t compared = 0;
    for (Isa isa : supported_x86_simd())
        for (std::size_t i = 0; i < types.header.tensors.size(); ++i)
            for (Path p : paths) {
                const auto& t = types.header.tensors[i];
                if (t.type != id(p.from)) continue;
                const std::size_t n = t.elements() / ck::kernels::block_elements(p.to) *
                                      ck::kernels::block_elements(p.to) / 256 *
                                      256;  // whole blocks of both
                if (n == 0) continue;
                auto bytes = types.reader.tensor(i).bytes();
                check_same(isa, p, std::vector<std::byte>(bytes.begin(), bytes.end()), n, t.name);
                ++compared;
            }
    BOOST_TEST(compared == std::size(paths) * supported_x86_simd().size());
}

BOOST_AUTO_TEST_CASE(same_as_scalar_on_random_blocks_with_extreme_scales) {
    std::mt19937_64 random(20261106);
    for (Isa isa : supported_x86_simd())
        for (Path p : paths)
            // 8448 elements: eight full 1024-element slices and a partial one.
            for (int round = 0; round < 4; ++round) {
                const std::size_t n = 8448;
                check_same(isa, p, random_source(p.from, n, random), n, "random blocks");
            }
}

BOOST_AUTO_TEST_CASE(same_as_scalar_at_code_boundaries) {
    // F32 blocks whose values sit exactly on, and a few ulps around, the half-way points
    // between Int8 codes and between NF4 entries: where a rounding shortcut would show.
    std::mt19937_64 random(255);
    std::uniform_real_distribution<float> low(-2.0f, 0.5f), width(1e-3f, 4.0f);
    const std::size_t n = 128 * 64;
    std::vector<float> values(n);
    for (std::size_t b = 0; b < n / 128; ++b) {
        float* v = values.data() + 128 * b;
        const float lo = ck::kernels::f16_to_f32(ck::kernels::f32_to_f16(low(random)));
        const float hi = ck::kernels::f16_to_f32(ck::kernels::f32_to_f16(lo + width(random)));
        v[0] = lo;
        v[1] = hi;
        for (std::size_t i = 2; i < 128; ++i) {
            const float k = static_cast<float>(random() % 255) + 0.5f;
            const float at = lo + k / 255.0f * (hi - lo);
            const auto nudge = static_cast<std::int32_t>(random() % 5) - 2;
            v[i] = std::bit_cast<float>(std::bit_cast<std::int32_t>(at) + nudge);
        }
        // The second half of each block: NF4 midpoints scaled by the block's absmax.
        const float a = std::max(std::fabs(lo), std::fabs(hi));
        for (std::size_t i = 66; i < 128; ++i) {
            const std::size_t j = random() % 15;
            const float mid =
                (ck::kernels::nf4_codebook[j] + ck::kernels::nf4_codebook[j + 1]) / 2 * a;
            const auto nudge = static_cast<std::int32_t>(random() % 5) - 2;
            v[i] = std::bit_cast<float>(std::bit_cast<std::int32_t>(mid) + nudge);
        }
    }
    // And the one value where y + 0.5 rounds a code up wrongly: with min 0 and max 1,
    // 0x3b008080 * 255 = 0x3effffff (0.49999997), code 0.
    float* last = values.data() + n - 128;
    std::fill(last, last + 128, 0.25f);
    last[0] = 0.0f;
    last[1] = 1.0f;
    last[2] = std::bit_cast<float>(0x3b008080u);
    std::vector<std::byte> bytes(n * 4);
    ck::le::store_array(bytes.data(), values.data(), values.size());
    for (Isa isa : supported_x86_simd())
        for (RepackTarget to : {RepackTarget::int8, RepackTarget::nf4})
            check_same(isa, {GgmlType::f32, to}, bytes, n, "code boundaries");
}

BOOST_AUTO_TEST_CASE(selection_honours_the_limit) {
    BOOST_TEST((ck::kernels::select_repack_table(Isa::scalar).isa == Isa::scalar));
    // Repack has no NEON variant (docs/platforms.md): scalar there.
    const Isa best = supported_x86_simd().empty() ? Isa::scalar : best_isa();
    BOOST_TEST((ck::kernels::select_repack_table(Isa::avx512).isa == best));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_repack_variants
