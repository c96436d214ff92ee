// The weighted quantizers (quantize_weighted.hpp) against ggml's bytes.
//
// The ground truth is tests/data/weighted/weighted.gguf, written by ggml's own
// ggml_quantize_chunk (make_weighted_refs.c beside it, linked against the ggml-base library that
// llama-quantize uses): 24 rows of 512 floats (`src`), a weight vector per row (`weights`: spread
// over decades like an imatrix, half zeros, flat, 1e-10..1e10, a few huge among tiny), and per
// type `<type>.weighted` (each row quantized with its weights) and, unless ggml refuses it,
// `<type>.plain` (without). The rows: N(0, 0.02), outliers x60, all zero, zero blocks, ties on a
// 0.1 grid, a constant, 1e4 among 1e-6, +-6e4, 1e-18 scale, one nonzero per block, |x| ties,
// uniform, Laplace, one-signed. Each row is quantized here and compared byte for byte.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ck/ggml_types.hpp"
#include "ck/kernels/quantize_weighted.hpp"
#include "kernel_test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_weighted {

namespace {

using namespace cktest::kernels;

TestGguf& references() {
    static TestGguf refs(weighted_gguf());
    return refs;
}

// Compares every row of `<type>.<variant>` with what `fn` writes; returns the rows that differ.
std::vector<std::size_t> differing_rows(const ck::TypeInfo& type, const std::string& variant,
                                        ck::kernels::WeightedQuantizeRowFn fn, bool weighted) {
    TestGguf& refs = references();
    const ValuesAndWeights inputs = weighted_rows(refs);
    const std::size_t index = refs.index_of(std::string(type.name) + "." + variant);
    BOOST_TEST_REQUIRE(index < refs.header.tensors.size());
    const ck::TensorInfo& info = refs.header.tensors[index];
    const auto cols = static_cast<std::size_t>(info.ne[0]);
    const auto rows = static_cast<std::size_t>(info.ne[1]);
    const std::size_t row_bytes = cols / type.block_size * type.block_bytes;
    const ck::TensorView want = refs.reader.tensor(index);
    BOOST_TEST_REQUIRE(want.size() == rows * row_bytes);
    std::vector<std::size_t> bad;
    std::vector<std::byte> got(row_bytes + 64, std::byte{0xa5});
    for (std::size_t r = 0; r < rows; ++r) {
        fn(inputs.x.data() + r * cols, got.data(), cols,
           weighted ? inputs.w.data() + r * cols : nullptr);
        const bool guard = std::all_of(got.begin() + static_cast<std::ptrdiff_t>(row_bytes),
                                       got.end(), [](std::byte b) { return b == std::byte{0xa5}; });
        BOOST_TEST(guard, type.name << " row " << r << " wrote past its blocks");
        if (std::memcmp(got.data(), want.data() + r * row_bytes, row_bytes) != 0) bad.push_back(r);
    }
    return bad;
}

const char* const weighted_types[] = {"q2_K",  "q3_K",    "q4_K",   "q5_K",   "q6_K",    "q4_0",
                                      "q4_1",  "q5_0",    "q5_1",   "iq4_nl", "iq4_xs",  "iq1_s",
                                      "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s",  "iq3_xxs", "iq3_s"};

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_weighted)

// Every row, with its weights and (where ggml allows it) without, byte for byte.
BOOST_DATA_TEST_CASE(matches_ggml_byte_for_byte, boost::unit_test::data::make(weighted_types),
                     type_name) {
    const ck::TypeInfo* type = ck::find_type(std::string_view(type_name));
    BOOST_TEST_REQUIRE(type != nullptr);
    const ck::kernels::WeightedQuantizeRowFn fn = ck::kernels::weighted_quantizer(type->id);
    BOOST_TEST_REQUIRE(fn != nullptr, "no weighted quantizer for " << type_name);
    for (const bool weighted : {true, false}) {
        const std::string variant = weighted ? "weighted" : "plain";
        if (!weighted && ck::kernels::quantizer_requires_weights(type->id)) {
            BOOST_TEST(references().index_of(std::string(type_name) + ".plain") ==
                           references().header.tensors.size(),
                       "ggml wrote " << type_name << " without weights, yet we say it needs them");
            continue;
        }
        const std::vector<std::size_t> bad = differing_rows(*type, variant, fn, weighted);
        std::string rows;
        for (std::size_t r : bad) rows += " " + std::to_string(r);
        BOOST_TEST(bad.empty(),
                   type_name << "." << variant << ": rows that differ from ggml:" << rows);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_quantize_weighted
