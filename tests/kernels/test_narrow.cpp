// The f32 -> f16 / bf16 narrowing kernels: the scalar reference gives numpy's float16 for all
// 65536 BF16 values (the table in tests/data/float16, written by numpy, is what llama.cpp's
// converters write), every SIMD variant this CPU runs gives the reference's bits on every BF16
// value and on every f32 rounding boundary, and `dequant[to=f16]` writes numpy's bytes through
// the real binary with each variant.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "ck/context.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_narrow {

namespace {

namespace fs = std::filesystem;
using ck::Isa;
using ck::kernels::NarrowFn;
using ck::kernels::NarrowTable;

// Every BF16 bit pattern, in order, widened to f32 (exactly: the top half of the f32).
std::vector<float> every_bf16_value() {
    std::vector<float> values(65536);
    for (std::uint32_t b = 0; b < 65536; ++b) values[b] = ck::kernels::bf16_to_f32(b);
    return values;
}

// numpy's float16 bits of every BF16 value (tests/data/float16/README.md says how it was made).
std::vector<std::uint16_t> numpy_f16_of_every_bf16() {
    std::ifstream in(cktest::test_data() / "float16" / "numpy-bf16-to-f16.bin", std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    std::vector<std::uint16_t> table(bytes.size() / 2);
    ck::le::load_array(bytes.data(), table.data(), table.size());  // a little-endian file
    return table;
}

// Reports the first element where `got` differs from `want`, with its input's bits.
void check_bits(const std::vector<std::uint16_t>& got, const std::vector<std::uint16_t>& want,
                const std::vector<float>& in, const std::string& what) {
    BOOST_TEST_REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) {
            BOOST_ERROR(what << ": input 0x" << std::hex << std::bit_cast<std::uint32_t>(in[i])
                             << " gives 0x" << got[i] << ", expected 0x" << want[i]);
            return;
        }
    BOOST_TEST(true);
}

// The kernel's halves as host values (it stores them little-endian, as tensor bytes hold them).
std::vector<std::uint16_t> narrowed(NarrowFn fn, const std::vector<float>& in) {
    std::vector<std::uint16_t> out(in.size());
    fn(in.data(), out.data(), in.size());
    ck::le::in_place(out.data(), out.size());
    return out;
}

// f32 bit patterns around every place rounding to f16 or bf16 can go either way: each
// sign/exponent/top-mantissa combination with the bits below f16's (13) or bf16's (16)
// mantissa at zero, just below half, half, just above half and all ones. Subnormal results,
// overflow to infinity, infinities and NaN payloads are all among them.
std::vector<float> rounding_boundaries(int dropped_bits) {
    const std::uint32_t half = 1u << (dropped_bits - 1), all = (1u << dropped_bits) - 1;
    const std::uint32_t lows[] = {0, 1, half - 1, half, half + 1, all};
    std::vector<float> values;
    for (std::uint32_t top = 0; top < (1u << (32 - dropped_bits)); ++top)
        for (std::uint32_t low : lows)
            values.push_back(std::bit_cast<float>(top << dropped_bits | low));
    return values;
}

// A safetensors file holding one BF16 tensor [256, 256] with every BF16 bit pattern in order.
void write_every_bf16_safetensors(const fs::path& path) {
    const std::string header =
        R"({"every_bf16.weight":{"dtype":"BF16","shape":[256,256],"data_offsets":[0,131072]}})";
    const std::uint64_t length = header.size();
    std::ofstream out(path, std::ios::binary);
    char bytes[8];
    ck::le::store(bytes, length);
    out.write(bytes, 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (std::uint32_t b = 0; b < 65536; ++b) {
        ck::le::store(bytes, static_cast<std::uint16_t>(b));
        out.write(bytes, 2);
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(narrow_kernels)

BOOST_AUTO_TEST_CASE(reference_gives_numpy_float16_for_every_bf16) {
    const std::vector<std::uint16_t> numpy = numpy_f16_of_every_bf16();
    BOOST_TEST_REQUIRE(numpy.size() == 65536u, "tests/data/float16/numpy-bf16-to-f16.bin");
    const std::vector<float> in = every_bf16_value();
    check_bits(narrowed(ck::kernels::scalar_narrow_table().to_f16, in), numpy, in, "reference f16");
    // ggml's own rounding agrees on every number; only NaN payloads differ (0x7e00 there).
    for (std::size_t i = 0; i < in.size(); ++i)
        if (in[i] == in[i]) BOOST_TEST_REQUIRE(ck::kernels::f32_to_f16(in[i]) == numpy[i]);
}

// f32 inputs no BF16 value reaches (NaN payloads below bit 13, the edges of overflow and of
// the subnormal range) with numpy 1.24.2's float16 of each (tests/data/float16/README.md).
BOOST_AUTO_TEST_CASE(reference_gives_numpy_float16_for_f32_edges) {
    const std::pair<std::uint32_t, std::uint16_t> numpy[] = {
        {0x7f800001, 0x7c01}, {0xff800001, 0xfc01}, {0x7f801fff, 0x7c01}, {0x7f802000, 0x7c01},
        {0x7fc00000, 0x7e00}, {0xffc00001, 0xfe00}, {0x7fffffff, 0x7fff}, {0x7f800000, 0x7c00},
        {0x477fefff, 0x7bff}, {0x477ff000, 0x7c00}, {0x33000000, 0x0000}, {0x33000001, 0x0001},
        {0x387fe000, 0x0400}, {0x387ff000, 0x0400}};
    for (const auto& [f32, f16] : numpy) {
        const float in = std::bit_cast<float>(f32);
        std::uint16_t got = 0;
        ck::kernels::scalar_narrow_table().to_f16(&in, &got, 1);
        ck::le::in_place(&got, 1);
        BOOST_TEST(got == f16, "0x" << std::hex << f32);
    }
}

BOOST_AUTO_TEST_CASE(variants_match_the_reference_on_every_bf16) {
    const std::vector<float> in = every_bf16_value();
    const NarrowTable& reference = ck::kernels::scalar_narrow_table();
    const std::vector<std::uint16_t> want_f16 = narrowed(reference.to_f16, in);
    const std::vector<std::uint16_t> want_bf16 = narrowed(reference.to_bf16, in);
    for (Isa isa : cktest::supported_isas()) {
        const NarrowTable& table = ck::kernels::narrow_table(isa);
        BOOST_TEST((table.isa == isa));
        const std::string name(ck::isa_name(isa));
        check_bits(narrowed(table.to_f16, in), want_f16, in, name + " f16");
        check_bits(narrowed(table.to_bf16, in), want_bf16, in, name + " bf16");
    }
}

BOOST_AUTO_TEST_CASE(variants_match_the_reference_on_rounding_boundaries) {
    const NarrowTable& reference = ck::kernels::scalar_narrow_table();
    const std::vector<float> for_f16 = rounding_boundaries(13), for_bf16 = rounding_boundaries(16);
    const std::vector<std::uint16_t> want_f16 = narrowed(reference.to_f16, for_f16);
    const std::vector<std::uint16_t> want_bf16 = narrowed(reference.to_bf16, for_bf16);
    for (Isa isa : cktest::supported_isas()) {
        const NarrowTable& table = ck::kernels::narrow_table(isa);
        const std::string name(ck::isa_name(isa));
        check_bits(narrowed(table.to_f16, for_f16), want_f16, for_f16, name + " f16");
        check_bits(narrowed(table.to_bf16, for_bf16), want_bf16, for_bf16, name + " bf16");
    }
}

// Any length and alignment: the vector loop, the tail and the NaN detour all meet the
// reference, and nothing outside [0, n) is written.
BOOST_AUTO_TEST_CASE(variants_take_any_length_and_alignment) {
    std::vector<float> in = every_bf16_value();
    in.resize(200);
    in[37] = std::bit_cast<float>(0x7f800001u);  // a signalling NaN inside a vector
    in[70] = std::bit_cast<float>(0xffc00000u);
    for (Isa isa : cktest::supported_isas()) {
        const NarrowTable& table = ck::kernels::narrow_table(isa);
        for (NarrowFn fn : {table.to_f16, table.to_bf16}) {
            const NarrowFn ref = fn == table.to_f16 ? ck::kernels::scalar_narrow_table().to_f16
                                                    : ck::kernels::scalar_narrow_table().to_bf16;
            for (std::size_t offset = 0; offset < 3; ++offset)
                for (std::size_t n = 0; n + offset <= 97; n += 7) {
                    std::vector<std::uint16_t> got(n + 2, 0xabcd), want(n + 2, 0xabcd);
                    fn(in.data() + offset, got.data() + 1, n);
                    ref(in.data() + offset, want.data() + 1, n);
                    BOOST_TEST(got == want, ck::isa_name(isa) << " n " << n << " at " << offset);
                }
        }
    }
}

// Through the real binary, with each variant (--isa): a BF16 tensor holding every BF16 value
// becomes, byte for byte, the F16 tensor numpy's astype(float16) makes of it.
BOOST_AUTO_TEST_CASE(dequant_to_f16_writes_numpy_bytes) {
    cktest::TempDir dir;
    write_every_bf16_safetensors(dir / "every.safetensors");
    const std::vector<std::uint16_t> numpy = numpy_f16_of_every_bf16();
    for (Isa isa : cktest::supported_isas()) {
        const fs::path out = dir / (std::string(ck::isa_name(isa)) + ".gguf");
        const auto r =
            cktest::run_ckhost({"--isa", std::string(ck::isa_name(isa)), "--pipeline",
                                "safetensors:dequant[to=f16]:gguf", "-i",
                                (dir / "every.safetensors").string(), "-o", out.string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        ck::RecordingContext context;
        ckplugin::gguf::GgufReader reader(context);
        const ck::ModelHeader header = reader.open(out);
        BOOST_TEST_REQUIRE(header.tensors.size() == 1u);
        BOOST_TEST(header.tensors[0].type == 1u);  // F16
        const auto bytes = reader.tensor(0).bytes();
        BOOST_TEST_REQUIRE(bytes.size() == numpy.size() * 2);
        std::vector<std::uint16_t> written(numpy.size());
        ck::le::load_array(bytes.data(), written.data(), written.size());
        BOOST_TEST((written == numpy), ck::isa_name(isa));
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_narrow
