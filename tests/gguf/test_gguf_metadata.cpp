// GgufReader against a reference: tests/data/meta/metadata.gguf comes with metadata.expected.json,
// a description of the file produced independently of this reader. Every key (in file order),
// type and value, the header's counts and layout, and every tensor's entry and bytes must match.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/metadata.hpp"
#include "ck/model.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguf_metadata {

namespace {

using ck::ValueType;
using nlohmann::json;

const json& expected() {
    static const json parsed = [] {
        std::ifstream in(cktest::test_data() / "meta" / "metadata.expected.json", std::ios::binary);
        if (!in) throw std::runtime_error("cannot open metadata.expected.json");
        return json::parse(in);
    }();
    return parsed;
}

// The reference file, opened fresh for each test case (the reader must outlive its views).
struct Opened {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader{context};
    ck::ModelHeader header = reader.open(cktest::test_data() / "meta" / "metadata.gguf");
    const json& exp = expected();
};

// Floats are given as their bit pattern ("0x7fc00000") so -0, NaN and denormals compare exactly.
std::uint64_t float_bits(const json& f) {
    return std::stoull(f.at("bits").get<std::string>(), nullptr, 16);
}

// What Value::raw() / ArrayValue::raw_at() must hold for a fixed-size value: its
// little-endian bits, zero-extended to 64 (so a negative i8 is 0x..ff, not sign-extended).
std::uint64_t expected_raw(ValueType type, const json& v) {
    if (type == ValueType::f32 || type == ValueType::f64) return float_bits(v);
    if (type == ValueType::boolean) return v.get<bool>() ? 1 : 0;
    const std::size_t size = ck::value_type_size(type);
    const std::uint64_t mask = size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * size)) - 1;
    // nlohmann keeps values above INT64_MAX as number_unsigned; negatives wrap to two's complement.
    const std::uint64_t bits = v.is_number_unsigned()
                                   ? v.get<std::uint64_t>()
                                   : static_cast<std::uint64_t>(v.get<std::int64_t>());
    return bits & mask;
}

std::vector<std::byte> from_hex(const std::string& hex) {
    std::vector<std::byte> out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<std::byte>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    return out;
}

// Every element, counting mismatches so a bad 100000-element array gives one message, not 100000.
void check_array(const std::string& key, const ck::ArrayValue& a, const json& kv) {
    const json& items = kv.at("value");
    const auto n = kv.at("n").get<std::uint64_t>();
    BOOST_TEST(
        std::string(ck::value_type_name(a.element_type())) == kv.at("elem_type").get<std::string>(),
        key << ": element type");
    BOOST_TEST(a.size() == n, key << ": element count");
    BOOST_TEST(items.size() == n,
               key << ": the expected json lists " << items.size() << " of " << n);
    if (a.size() != items.size()) return;

    std::uint64_t bad = 0, first_bad = 0;
    auto mismatch = [&](std::uint64_t i) {
        if (bad++ == 0) first_bad = i;
    };
    if (a.element_type() == ValueType::string) {
        std::uint64_t i = 0;
        a.for_each_string([&](std::string_view s) {
            if (i >= items.size() || s != items[i].get_ref<const std::string&>()) mismatch(i);
            ++i;
            return true;
        });
        BOOST_TEST(i == n, key << ": for_each_string visited " << i << " strings");
    } else {
        for (std::uint64_t i = 0; i < a.size(); ++i)
            if (a.raw_at(i) != expected_raw(a.element_type(), items[i])) mismatch(i);
    }
    BOOST_TEST(bad == 0u,
               key << ": " << bad << " elements differ, the first at index " << first_bad);
}

void check_value(const std::string& key, const ck::Value& v, const json& kv) {
    const json& want = kv.at("value");
    if (v.type() == ValueType::string) {
        // Byte-exact: json strings are UTF-8, as GGUF's are.
        BOOST_TEST(v.str() == want.get<std::string>(), key << ": string differs");
    } else if (v.type() == ValueType::array) {
        check_array(key, v.array(), kv);
    } else {
        BOOST_TEST(v.raw() == expected_raw(v.type(), want), key << ": raw bits 0x" << std::hex
                                                                << v.raw() << ", expected 0x"
                                                                << expected_raw(v.type(), want));
        if (!v.is_integer()) return;
        // The typed reading must agree too (sign extension of i8...i64, u64 above INT64_MAX).
        if (want.is_number_unsigned())
            BOOST_TEST((v.as_uint() == std::optional(want.get<std::uint64_t>())),
                       key << ": as_uint");
        else
            BOOST_TEST((v.as_int() == std::optional(want.get<std::int64_t>())), key << ": as_int");
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_metadata)

BOOST_FIXTURE_TEST_CASE(header_counts_and_layout, Opened) {
    const auto alignment = exp.at("alignment").get<std::uint64_t>();
    const auto data_offset = exp.at("data_offset").get<std::uint64_t>();
    BOOST_TEST(header.format == "gguf");
    BOOST_TEST(header.metadata.size() == exp.at("n_kv").get<std::size_t>(), "n_kv");
    BOOST_TEST(header.tensors.size() == exp.at("n_tensors").get<std::size_t>(), "n_tensors");
    BOOST_TEST(reader.data_start() == data_offset, "data section start");
    BOOST_TEST(reader.data_start() % alignment == 0u, "data section is aligned");

    // What `inspect` shows about the container.
    auto fact = [&](std::string_view name) -> std::string {
        for (const auto& [k, v] : header.format_facts)
            if (k == name) return v;
        return "<missing>";
    };
    BOOST_TEST(fact("version") == std::to_string(exp.at("version").get<int>()), "version fact");
    BOOST_TEST(fact("alignment") == std::to_string(alignment), "alignment fact");
    BOOST_TEST(fact("data start") == std::to_string(data_offset), "data start fact");

    // The alignment came from general.alignment, not the default of 32.
    const ck::Value* key = header.metadata.find("general.alignment");
    BOOST_TEST_REQUIRE(key != nullptr);
    BOOST_TEST((key->type() == ValueType::u32 && key->as_uint() == std::optional(alignment)));
    BOOST_TEST(context.warnings().empty(), "a valid file reads without warnings");
}

BOOST_FIXTURE_TEST_CASE(every_key_in_file_order, Opened) {
    const json& kvs = exp.at("kv");
    const auto& entries = header.metadata.entries();
    BOOST_TEST(entries.size() == kvs.size(), "number of keys");
    for (std::size_t i = 0; i < std::min(entries.size(), kvs.size()); ++i) {
        const auto& [key, value] = entries[i];
        const json& kv = kvs[i];
        const auto want_key = kv.at("key").get<std::string>();
        BOOST_TEST(key == want_key, "key " << i << " out of order");
        BOOST_TEST(header.metadata.find(want_key) == &value, want_key << ": find() disagrees");
        const auto want_type = kv.at("type").get<std::string>();
        BOOST_TEST(std::string(ck::value_type_name(value.type())) == want_type,
                   want_key << ": type");
        if (key == want_key && ck::value_type_from_name(want_type) == value.type())
            check_value(key, value, kv);
    }
}

// Checked above against the json too; this pins the generator's formula independently.
BOOST_FIXTURE_TEST_CASE(long_array_follows_its_formula, Opened) {
    const ck::Value* v = header.metadata.find("test.arr.long_u32");
    BOOST_TEST_REQUIRE(v != nullptr);
    BOOST_TEST_REQUIRE(
        (v->type() == ValueType::array && v->array().element_type() == ValueType::u32));
    const ck::ArrayValue& a = v->array();
    BOOST_TEST(a.size() == 100000u);
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i < a.size(); ++i)
        if (a.raw_at(i) != static_cast<std::uint32_t>(i * 2654435761u)) ++bad;
    BOOST_TEST(bad == 0u,
               "test.arr.long_u32: " << bad << " elements break value[i] = i * 2654435761");
}

BOOST_FIXTURE_TEST_CASE(every_tensor, Opened) {
    const json& tensors = exp.at("tensors");
    BOOST_TEST(header.tensors.size() == tensors.size(), "number of tensors");
    for (std::size_t i = 0; i < std::min(header.tensors.size(), tensors.size()); ++i) {
        const ck::TensorInfo& t = header.tensors[i];
        const json& e = tensors[i];
        const auto name = e.at("name").get<std::string>();
        BOOST_TEST(t.name == name, "tensor " << i << ": name");
        BOOST_TEST(t.type == e.at("type").get<std::uint32_t>(), name << ": ggml type");

        // The json pads ne to 4 with 1s; the reader keeps exactly the dims stored in the file.
        const auto n_dims = e.at("n_dims_in_file").get<std::size_t>();
        const json& ne = e.at("ne");
        BOOST_TEST(t.ne.size() == n_dims, name << ": number of dims");
        std::uint64_t elements = 1;
        for (const json& d : ne) elements *= d.get<std::uint64_t>();
        for (std::size_t d = 0; d < std::min(n_dims, t.ne.size()); ++d)
            BOOST_TEST(t.ne[d] == ne.at(d).get<std::int64_t>(), name << ": ne[" << d << "]");
        BOOST_TEST(t.elements() == elements, name << ": element count");

        // The json's offset is relative to the data section; source_offset is absolute.
        BOOST_TEST(t.source_offset == reader.data_start() + e.at("offset").get<std::uint64_t>(),
                   name << ": offset");
        BOOST_TEST(t.nbytes == e.at("nbytes").get<std::uint64_t>(), name << ": nbytes");

        const ck::TensorView view = reader.tensor(i);
        const std::vector<std::byte> want = from_hex(e.at("data_hex").get<std::string>());
        BOOST_TEST(want.size() == t.nbytes, name << ": the expected json's data_hex length");
        BOOST_TEST(view.bytes().size() == want.size(), name << ": data size");
        BOOST_TEST(std::equal(view.bytes().begin(), view.bytes().end(), want.begin(), want.end()),
                   name << ": data bytes differ");
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_metadata
