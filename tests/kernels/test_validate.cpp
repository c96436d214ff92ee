// ck::kernels::check_data, llama.cpp's --check-tensors (ggml_validate_row_data): every float
// element and every block scale, for NaN and infinities, on the bytes ggml wrote in
// tests/data/types/types.gguf and on copies with one value broken.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ck/context.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/validate.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_validate {

namespace {

using ck::kernels::ScaleEncoding;

struct Types {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader{context};
    ck::ModelHeader header = reader.open(cktest::test_data() / "types" / "types.gguf");

    std::vector<std::byte> bytes(std::size_t i) {
        const auto view = reader.tensor(i);
        return {view.bytes().begin(), view.bytes().end()};
    }
};

// Stores `value` (an f16, f32 or E8M0 bit pattern) in `field` of the block at `block`.
void store(std::byte* block, const ck::kernels::ScaleField& field, std::uint32_t value) {
    std::byte* p = block + field.offset;
    switch (field.encoding) {
        case ScaleEncoding::f16: {
            ck::le::store(p, static_cast<std::uint16_t>(value));
            break;
        }
        case ScaleEncoding::f32:
            ck::le::store(p, value);
            break;
        case ScaleEncoding::e8m0:
            *p = std::byte{0xff};
            break;
        case ScaleEncoding::iq1m_f16:
            // iq1m_scale_t: nibble k of the f16 is the top nibble of the k-th u16.
            for (int k = 0; k < 4; ++k) {
                const auto s = ck::le::load<std::uint16_t>(p + 2 * k);
                ck::le::store(p + 2 * k, static_cast<std::uint16_t>(
                                             (s & 0x0fff) | (((value >> (4 * k)) & 0xf) << 12)));
            }
            break;
    }
}

std::uint32_t infinity_of(ScaleEncoding e) {
    return e == ScaleEncoding::f32 ? 0x7f800000u : 0xfc00u;  // -Inf for the halves
}
std::uint32_t nan_of(ScaleEncoding e) {
    return e == ScaleEncoding::f32 ? 0x7fc00001u : 0x7e01u;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(validate)

BOOST_AUTO_TEST_CASE(ggmls_own_tensors_are_clean_except_the_special_floats) {
    Types t;
    BOOST_TEST_REQUIRE(t.header.tensors.size() >= 28u);
    for (std::size_t i = 0; i < t.header.tensors.size(); ++i) {
        const ck::TensorInfo& info = t.header.tensors[i];
        const auto bytes = t.bytes(i);
        const auto problem = ck::kernels::check_data(info.type, bytes);
        if (info.name.find("_special") == std::string::npos) {
            BOOST_TEST(!problem.has_value(),
                       info.name << ": " << (problem ? problem->message() : std::string()));
            continue;
        }
        // f32/f16/bf16_special hold zeros, infinities and NaNs: the first non-finite value of
        // ggml's own widening is the one reported, and every one is counted.
        const auto widened =
            cktest::read_file(cktest::test_data() / "types" / (info.name + ".f32"));
        std::vector<float> values(widened.size() / 4);
        ck::le::load_array(widened.data(), values.data(), values.size());
        std::size_t first = values.size(), count = 0;
        for (std::size_t j = 0; j < values.size(); ++j)
            if (!std::isfinite(values[j])) {
                if (first == values.size()) first = j;
                ++count;
            }
        BOOST_TEST_REQUIRE(problem.has_value(), info.name);
        BOOST_TEST(problem->field == nullptr);
        BOOST_TEST(problem->index == first, info.name);
        BOOST_TEST(problem->count == count, info.name);
        BOOST_TEST(problem->nan == std::isnan(values[first]), info.name);
    }
}

BOOST_AUTO_TEST_CASE(every_scale_field_is_checked_and_named) {
    Types t;
    std::size_t types_checked = 0;
    for (std::size_t i = 0; i < t.header.tensors.size(); ++i) {
        const ck::TensorInfo& info = t.header.tensors[i];
        const auto fields = ck::kernels::scale_fields(info.type);
        if (fields.empty()) continue;
        ++types_checked;
        const ck::TypeInfo& type = *ck::find_type(info.type);
        for (const auto& field : fields) {
            for (const bool nan : {false, true}) {
                auto bytes = t.bytes(i);
                store(bytes.data() + 3 * type.block_bytes, field,
                      nan ? nan_of(field.encoding) : infinity_of(field.encoding));
                const auto problem = ck::kernels::check_data(info.type, bytes);
                BOOST_TEST_CONTEXT(info.name << " " << field.name << (nan ? " NaN" : " Inf")) {
                    BOOST_TEST_REQUIRE(problem.has_value());
                    BOOST_TEST(problem->index == 3u);
                    BOOST_TEST(problem->field == &field);
                    BOOST_TEST(problem->count == 1u);
                    if (field.encoding == ScaleEncoding::e8m0)
                        BOOST_TEST(problem->message() == "block 3 scale e is NaN (0xff)");
                    else
                        BOOST_TEST(problem->message() == "block 3 " + std::string(field.name) +
                                                             (nan ? " is NaN" : " is Inf"));
                }
                // The offset is a real scale: ggml's widening of that block is no longer
                // finite (E8M0's 0xff is decoded as 2^127 by ggml, so it is left out).
                const auto fn = ck::kernels::scalar_dequant_table().fn[info.type];
                if (!fn || field.encoding == ScaleEncoding::e8m0) continue;
                std::vector<float> block(type.block_size);
                fn(bytes.data() + 3 * type.block_bytes, block.data(), block.size());
                BOOST_TEST(std::any_of(block.begin(), block.end(),
                                       [](float v) { return !std::isfinite(v); }),
                           info.name << " " << field.name);
            }
        }
    }
    BOOST_TEST(types_checked >= 22u);  // every quantized type of types.gguf but NVFP4
}

BOOST_AUTO_TEST_CASE(the_first_bad_element_over_many_pieces) {
    // 10 MB of f32: three pieces of the pool's work. The answer is the same for any thread
    // count: the first bad element of the tensor and every bad one counted.
    std::vector<float> values(2'500'000, 1.0f);
    values[2'200'000] = std::numeric_limits<float>::quiet_NaN();
    values[1'500'000] = -std::numeric_limits<float>::infinity();
    values[1'500'001] = std::numeric_limits<float>::infinity();
    // check_data reads tensor bytes: the floats little-endian.
    std::vector<std::byte> bytes(values.size() * 4);
    ck::le::store_array(bytes.data(), values.data(), values.size());
    const auto problem = ck::kernels::check_data(0, bytes);
    BOOST_TEST_REQUIRE(problem.has_value());
    BOOST_TEST(problem->index == 1'500'000u);
    BOOST_TEST(problem->count == 3u);
    BOOST_TEST(problem->message() == "element 1500000 is Inf");
    values[1'500'000] = values[1'500'001] = values[2'200'000] = 0.0f;
    ck::le::store_array(bytes.data(), values.data(), values.size());
    BOOST_TEST(!ck::kernels::check_data(0, bytes).has_value());
}

BOOST_AUTO_TEST_CASE(types_without_anything_to_check) {
    const std::vector<std::byte> ff(360, std::byte{0xff});
    for (ck::GgmlType type : {ck::GgmlType::i8, ck::GgmlType::i16, ck::GgmlType::i32,
                              ck::GgmlType::i64, ck::GgmlType::nvfp4})
        BOOST_TEST(!ck::kernels::check_data(static_cast<std::uint32_t>(type), ff).has_value());
    BOOST_TEST(!ck::kernels::check_data(4, ff).has_value());   // removed
    BOOST_TEST(!ck::kernels::check_data(99, ff).has_value());  // unknown
    // F64 elements are checked (all ones: NaN), and Q8_1's d and s (ggml refuses the type).
    BOOST_TEST(ck::kernels::check_data(28, ff)->message() == "element 0 is NaN");
    BOOST_TEST(ck::kernels::check_data(9, ff)->message() == "block 0 scale d is NaN");
    BOOST_TEST(ck::kernels::check_data(9, ff)->count == 20u);  // 10 blocks, 2 fields
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_validate
