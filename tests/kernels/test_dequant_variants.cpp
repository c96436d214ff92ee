// Every SIMD variant this CPU runs is bit-identical to the scalar reference (memcmp, NaN
// payloads included), on the ggml test data and on random blocks with extreme scales.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <span>
#include <vector>

#include "block_scales.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/support/little_endian.hpp"
#include "kernel_test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_dequant_variants {

namespace {

using ck::GgmlType;
using ck::Isa;
using namespace cktest::kernels;

// Compares variant against scalar on `blocks`; reports the first differing element.
void check_same(Isa isa, std::uint32_t type, const std::vector<std::byte>& blocks,
                const std::string& what) {
    const ck::TypeInfo& info = *ck::find_type(type);
    const std::size_t n = blocks.size() / info.block_bytes * info.block_size;
    std::vector<float> want(n), got(n);
    ck::kernels::scalar_dequant_table().fn[type](blocks.data(), want.data(), n);
    ck::kernels::dequant_table(isa).fn[type](blocks.data(), got.data(), n);
    if (std::memcmp(want.data(), got.data(), n * sizeof(float)) == 0) {
        BOOST_TEST(true);
        return;
    }
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t a, b;
        std::memcpy(&a, &want[i], 4);
        std::memcpy(&b, &got[i], 4);
        if (a != b) {
            BOOST_ERROR(info.name << " " << ck::isa_name(isa) << " on " << what << ": element " << i
                                  << " is 0x" << std::hex << b << ", scalar gives 0x" << a);
            return;
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dequant_variants)

// On x86-64 both SIMD variants cover the hot types; a build for another target has none
// (kernels/CMakeLists.txt), and says so.
BOOST_AUTO_TEST_CASE(variants_cover_the_hot_types) {
    const bool built = cktest::x86_simd_built;
    for (Isa isa : {Isa::avx2, Isa::avx512})
        for (GgmlType t : {GgmlType::f16, GgmlType::bf16, GgmlType::q4_0, GgmlType::q4_1,
                           GgmlType::q5_0, GgmlType::q5_1, GgmlType::q8_0, GgmlType::q4_k,
                           GgmlType::q5_k, GgmlType::q6_k, GgmlType::iq4_nl})
            BOOST_TEST(ck::kernels::has_own_kernel(isa, static_cast<std::uint32_t>(t)) == built,
                       ck::isa_name(isa)
                           << (built ? " lacks " : " has ") << ck::find_type(t)->name);
    // NEON (ARM64 builds): the types of issue 34's list.
    for (GgmlType t :
         {GgmlType::f16, GgmlType::bf16, GgmlType::q8_0, GgmlType::q4_0, GgmlType::iq4_nl,
          GgmlType::iq4_xs, GgmlType::q4_k, GgmlType::q5_k, GgmlType::q6_k})
        BOOST_TEST(ck::kernels::has_own_kernel(Isa::neon, static_cast<std::uint32_t>(t)) ==
                       cktest::neon_built,
                   "neon and " << ck::find_type(t)->name);
}

BOOST_AUTO_TEST_CASE(same_as_scalar_on_ggml_test_data) {
    if (no_simd("kernels")) return;
    TestGguf types(types_gguf());
    for (Isa isa : supported_simd()) {
        for (std::size_t i = 0; i < types.header.tensors.size(); ++i) {
            const auto& t = types.header.tensors[i];
            if (!ck::kernels::has_own_kernel(isa, t.type)) continue;
            auto bytes = types.reader.tensor(i).bytes();
            check_same(isa, t.type, std::vector<std::byte>(bytes.begin(), bytes.end()), t.name);
        }
    }
}

BOOST_AUTO_TEST_CASE(same_as_scalar_on_random_blocks_with_extreme_scales) {
    // zero, -zero, smallest subnormal, largest subnormal, largest normal, inf, -inf, quiet NaN,
    // signalling NaN, a NaN with payload, an ordinary value.
    const std::uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x7bff, 0x7c00,
                                      0xfc00, 0x7e00, 0x7d01, 0xfe55, 0x3c00};
    std::mt19937_64 random(20261122);
    for (Isa isa : supported_simd()) {
        for (std::uint32_t type = 0; type < ck::ggml_type_count; ++type) {
            if (!ck::kernels::has_own_kernel(isa, type)) continue;
            const ck::TypeInfo& info = *ck::find_type(type);
            // Small inputs (with a tail for the 8/16-wide float loops) and one large enough for
            // the streaming-store path.
            for (std::size_t elements : {std::size_t(16411), std::size_t(1) << 20}) {
                const std::size_t blocks =
                    (type == 1 || type == 30) ? elements : elements / info.block_size;
                std::vector<std::byte> data(blocks * info.block_bytes);
                for (auto& b : data) b = static_cast<std::byte>(random());
                for (std::size_t b = 0; b < blocks; ++b)
                    for (std::size_t offset :
                         cktest::f16_scale_offsets(static_cast<GgmlType>(type))) {
                        const std::uint16_t s = specials[random() % std::size(specials)];
                        ck::le::store(data.data() + b * info.block_bytes + offset, s);
                    }
                check_same(isa, type, data, "random blocks");
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(the_list_of_own_kernels_matches_each_table) {
    for (Isa isa : supported_simd()) {
        const auto& table = ck::kernels::dequant_table(isa);
        for (std::uint32_t type = 0; type < ck::ggml_type_count; ++type) {
            const bool own =
                table.fn[type] && table.fn[type] != ck::kernels::scalar_dequant_table().fn[type];
            BOOST_TEST(own == ck::kernels::has_own_kernel(isa, type), ck::isa_name(isa)
                                                                          << " type " << type);
        }
    }
}

BOOST_AUTO_TEST_CASE(selection_honours_the_limit) {
    BOOST_TEST((ck::kernels::select_dequant_table(Isa::scalar).isa == Isa::scalar));
    // The limit of this architecture gives the best variant; another architecture's, scalar.
    const bool arm = best_isa() == Isa::neon;
    BOOST_TEST(
        (ck::kernels::select_dequant_table(arm ? Isa::neon : Isa::avx512).isa == best_isa()));
    BOOST_TEST(
        (ck::kernels::select_dequant_table(arm ? Isa::avx512 : Isa::neon).isa == Isa::scalar));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_dequant_variants
