// The ggml type table and its size arithmetic (gguf.md).
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <limits>

#include "ck/ggml_types.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_types {

BOOST_AUTO_TEST_SUITE(ggml_types)

BOOST_AUTO_TEST_CASE(table_matches_gguf_md) {
    struct Row {
        std::uint32_t id;
        const char* name;
        std::uint32_t block, bytes;
    };
    // Every row of the table in gguf.md.
    const Row rows[] = {
        {0, "f32", 1, 4},         {1, "f16", 1, 2},         {2, "q4_0", 32, 18},
        {3, "q4_1", 32, 20},      {6, "q5_0", 32, 22},      {7, "q5_1", 32, 24},
        {8, "q8_0", 32, 34},      {9, "q8_1", 32, 36},      {10, "q2_K", 256, 84},
        {11, "q3_K", 256, 110},   {12, "q4_K", 256, 144},   {13, "q5_K", 256, 176},
        {14, "q6_K", 256, 210},   {15, "q8_K", 256, 292},   {16, "iq2_xxs", 256, 66},
        {17, "iq2_xs", 256, 74},  {18, "iq3_xxs", 256, 98}, {19, "iq1_s", 256, 50},
        {20, "iq4_nl", 32, 18},   {21, "iq3_s", 256, 110},  {22, "iq2_s", 256, 82},
        {23, "iq4_xs", 256, 136}, {24, "i8", 1, 1},         {25, "i16", 1, 2},
        {26, "i32", 1, 4},        {27, "i64", 1, 8},        {28, "f64", 1, 8},
        {29, "iq1_m", 256, 56},   {30, "bf16", 1, 2},       {34, "tq1_0", 256, 54},
        {35, "tq2_0", 256, 66},   {39, "mxfp4", 32, 17},    {40, "nvfp4", 64, 36},
        {41, "q1_0", 128, 18},    {42, "q2_0", 64, 18},
    };
    for (const Row& r : rows) {
        const ck::TypeInfo* t = ck::find_type(r.id);
        BOOST_TEST_REQUIRE(t != nullptr);
        BOOST_TEST(t->name == r.name, "id " << r.id);
        BOOST_TEST(t->block_size == r.block, "id " << r.id);
        BOOST_TEST(t->block_bytes == r.bytes, "id " << r.id);
        BOOST_TEST(!t->removed);
        BOOST_TEST(ck::find_type(std::string_view(r.name)) == t);
    }
    for (std::uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
        BOOST_TEST(ck::find_type(id)->removed, "id " << id);
        BOOST_TEST(!ck::row_bytes(id, 32).has_value());
    }
    BOOST_TEST(ck::find_type(43u) == nullptr);
    BOOST_TEST(ck::type_name(43) == "unknown(43)");
    BOOST_TEST(ck::type_name(4) == "removed(4)");
    BOOST_TEST(ck::find_type(std::string_view("Q4_K"))->id == 12u);
    BOOST_TEST(!ck::find_type(ck::GgmlType::q8_1)->dequantizable);
    BOOST_TEST(!ck::find_type(ck::GgmlType::q8_k)->dequantizable);
    BOOST_TEST(ck::find_type(ck::GgmlType::q4_k)->quantized);
    BOOST_TEST(!ck::find_type(ck::GgmlType::bf16)->quantized);
}

BOOST_AUTO_TEST_CASE(sizes_and_overflow) {
    BOOST_TEST(*ck::row_bytes(12, 512) == 288u);
    BOOST_TEST(!ck::row_bytes(12, 128).has_value());  // not a multiple of 256
    const std::array<std::int64_t, 2> q4k = {256, 3};
    BOOST_TEST(*ck::tensor_bytes(12, q4k) == 432u);
    const std::array<std::int64_t, 2> wraps = {std::int64_t(1) << 32, std::int64_t(1) << 32};
    BOOST_TEST(!ck::element_count(wraps).has_value());  // 2^64 wraps to 0 in ggml
    const std::array<std::int64_t, 3> hidden = {std::int64_t(1) << 32, std::int64_t(1) << 32, 0};
    BOOST_TEST(!ck::element_count(hidden).has_value());
    const std::array<std::int64_t, 2> empty = {0, 5};
    BOOST_TEST(*ck::tensor_bytes(0, empty) == 0u);
    const std::array<std::int64_t, 1> negative = {-1};
    BOOST_TEST(!ck::element_count(negative).has_value());
    const std::array<std::int64_t, 1> huge_f64 = {std::int64_t(1) << 61};
    BOOST_TEST(ck::element_count(huge_f64).has_value());
    BOOST_TEST(!ck::tensor_bytes(28, huge_f64).has_value());  // 2^61 * 8 bytes overflows
    const std::array<std::int64_t, 0> scalar = {};
    BOOST_TEST(*ck::tensor_bytes(0, scalar) == 4u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_types
