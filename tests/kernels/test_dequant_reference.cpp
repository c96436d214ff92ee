// The scalar reference dequantizers against ggml's own to_float, bit for bit.
//
// tests/data/types/ is a copy of ../shared/testdata/types/: types.gguf holds one 1024x8 tensor
// per ggml type (plus f32/f16/bf16 "special" tensors with zeros, infinities, NaNs and
// subnormals), and <name>.f32 beside it is what ggml's to_float produced for that tensor.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_dequant_reference {

namespace fs = std::filesystem;

namespace {

fs::path types_dir() {
    return cktest::test_data() / "types";
}

std::uint32_t bits_of(const unsigned char* p) {
    return ck::le::load<std::uint32_t>(p);
}

// Empty when `got` equals `want` byte for byte; otherwise where and how they first differ.
std::string first_mismatch(const std::vector<float>& got, const std::vector<unsigned char>& want) {
    if (want.size() != got.size() * sizeof(float)) {
        return "expected " + std::to_string(want.size()) + " bytes of output, the kernel made " +
               std::to_string(got.size() * sizeof(float));
    }
    // The kernel's host floats as the .f32 file's little-endian bytes.
    std::vector<unsigned char> got_bytes(want.size());
    ck::le::store_array(got_bytes.data(), got.data(), got.size());
    const unsigned char* g = got_bytes.data();
    if (std::memcmp(g, want.data(), want.size()) == 0) return {};
    std::size_t count = 0, first = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::memcmp(g + 4 * i, want.data() + 4 * i, 4) == 0) continue;
        if (first == got.size()) first = i;
        ++count;
    }
    std::ostringstream s;
    s << std::hex << std::showbase << "first mismatch at element " << std::dec << first << " (of "
      << count << "): got " << std::hex << bits_of(g + 4 * first) << " (" << got[first]
      << "), ggml " << bits_of(want.data() + 4 * first);
    s << " (" << ck::le::load<float>(want.data() + 4 * first) << ")";
    return s.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dequant_reference)

// Every tensor of types.gguf, dequantized by the scalar table, equals ggml's output exactly.
// The failure message names every type that differs, so an unfinished kernel shows up as a
// list rather than as the first error only.
BOOST_AUTO_TEST_CASE(every_type_matches_ggml_bit_for_bit) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(types_dir() / "types.gguf");
    BOOST_TEST_REQUIRE(header.tensors.size() >= 28u);

    const ck::kernels::DequantTable& table = ck::kernels::scalar_dequant_table();
    std::vector<std::string> failed;
    for (std::size_t i = 0; i < header.tensors.size(); ++i) {
        const ck::TensorInfo& info = header.tensors[i];
        BOOST_TEST_CONTEXT("tensor " << info.name << " (ggml type " << info.type << ")") {
            const ck::kernels::DequantFn fn =
                info.type < ck::ggml_type_count ? table.fn[info.type] : nullptr;
            if (!fn) {
                BOOST_ERROR("no scalar kernel");
                failed.push_back(info.name);
                continue;
            }
            const ck::TensorView view = reader.tensor(i);
            BOOST_TEST_REQUIRE(view.bytes().size() == info.nbytes);
            std::vector<float> out(info.elements());
            fn(view.bytes().data(), out.data(), out.size());

            const std::string problem =
                first_mismatch(out, cktest::read_file(types_dir() / (info.name + ".f32")));
            BOOST_TEST(problem.empty(), problem);
            if (!problem.empty()) failed.push_back(info.name);
        }
    }
    std::string list;
    for (const auto& name : failed) list += " " + name;
    BOOST_TEST(failed.empty(), "types that differ from ggml:" << list);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_dequant_reference
