// Metadata lines: every GGUF value type survives GGUF -> GGUF-lite -> GGUF (arrays too, the
// tiny model's 32000-entry tokenizer included), F32 tensors come back byte for byte, lines
// without a type prefix read as strings, and each kind of broken line is refused with its
// byte offset.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cstring>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "gguf_reader.hpp"
#include "gguflite_reader.hpp"
#include "gguflite_test_files.hpp"
#include "metadata_text.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguflite_metadata {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

// Same keys in the same order, same types, same values (scalars by their bits, strings and
// arrays by their GGUF encoding).
void check_same_metadata(const ck::Metadata& a, const ck::Metadata& b) {
    BOOST_TEST_REQUIRE(a.size() == b.size());
    auto it = b.begin();
    for (const auto& [key, value] : a) {
        const auto& [key_b, value_b] = *it++;
        BOOST_TEST(key == key_b);
        BOOST_TEST((value.type() == value_b.type()), key);
        switch (value.type()) {
            case ck::ValueType::string:
                BOOST_TEST(value.str() == value_b.str(), key);
                break;
            case ck::ValueType::array: {
                const auto &x = value.array(), &y = value_b.array();
                BOOST_TEST((x.element_type() == y.element_type()), key);
                BOOST_TEST(x.size() == y.size(), key);
                const auto ex = x.encoded(), ey = y.encoded();
                BOOST_TEST(std::equal(ex.begin(), ex.end(), ey.begin(), ey.end()), key);
                break;
            }
            default:
                BOOST_TEST(value.raw() == value_b.raw(), key);
        }
    }
}

// GGUF -> GGUF-lite -> GGUF through the binary; checks metadata and F32 tensors.
void round_trip(const fs::path& source, const std::string& scheme) {
    cktest::TempDir dir;
    auto r = gltest::convert("gguf:gguflite[scheme=" + scheme + "]", source, dir / "a.gguflite");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = gltest::convert("gguflite:gguf", dir / "a.gguflite", dir / "b.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);

    ck::RecordingContext context;
    ckplugin::gguf::GgufReader original(context), back(context);
    const ck::ModelHeader a = original.open(source), b = back.open(dir / "b.gguf");
    // Every key comes back as it was but general.file_type, which names the types the tensors
    // are read as (issue 28): all F32 here, llama.h's LLAMA_FTYPE_ALL_F32 = 0.
    ck::Metadata expected = a.metadata;
    if (expected.contains("general.file_type"))
        expected.set("general.file_type", ck::Value::of_u32(0));
    check_same_metadata(expected, b.metadata);
    BOOST_TEST_REQUIRE(a.tensors.size() == b.tensors.size());
    std::size_t f32_tensors = 0;
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
        BOOST_TEST(a.tensors[i].name == b.tensors[i].name);
        if (a.tensors[i].ne.size() > 0) BOOST_TEST(a.tensors[i].ne == b.tensors[i].ne);
        if (a.tensors[i].type != 0) continue;
        ++f32_tensors;
        const ck::TensorView a_view = original.tensor(i), b_view = back.tensor(i);
        const auto x = a_view.bytes(), y = b_view.bytes();
        BOOST_TEST(std::equal(x.begin(), x.end(), y.begin(), y.end()), a.tensors[i].name);
    }
    BOOST_TEST(f32_tensors > 0u);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguflite_metadata)

BOOST_AUTO_TEST_CASE(every_value_type_survives_the_round_trip) {
    // meta/metadata.gguf: every scalar type and its limits, NaN/inf, UTF-8 and escapes, arrays
    // of every type (empty ones, a 100k-element one), and F32 tensors of 1 to 4 dims.
    round_trip(cktest::test_data() / "meta" / "metadata.gguf", "f32");
}

BOOST_AUTO_TEST_CASE(tiny_llama_tokenizer_survives_the_round_trip,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path source = *cktest::shared_data() / "tiny-llama-q4_k_m.gguf";
    round_trip(source, "f32");
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader h = reader.open(source);
    BOOST_TEST(h.metadata.find("tokenizer.ggml.tokens")->array().size() == 32000u);
    BOOST_TEST(h.metadata.find("tokenizer.ggml.scores")->array().size() == 32000u);
}

BOOST_AUTO_TEST_CASE(lines_are_typed_json) {
    ck::Metadata m;
    m.set("a.u8", ck::Value::of_u8(200));
    m.set("a.i32", ck::Value::of_i32(-5));
    m.set("a.f32", ck::Value::of_f32(1e-5f));
    m.set("a.nan", ck::Value::scalar(ck::ValueType::f32, 0x7fc00000u));
    m.set("a.str", ck::Value::of_string("tab\there \"q\" \xe2\x80\x94\n"));
    const std::string tokens[] = {"<s>", "", "\xe2\x96\x81the"};
    m.set("a.arr", ck::Value::of_array(ck::ArrayValue::of_strings(tokens)));
    std::vector<std::string> notes;
    const std::string text = ckplugin::gguflite::encode_metadata(m, notes);
    BOOST_TEST(text ==
               "a.u8=u8:200\n"
               "a.i32=i32:-5\n"
               "a.f32=f32:1e-05\n"
               "a.nan=f32:\"nan\"\n"
               "a.str=str:\"tab\\there \\\"q\\\" \xe2\x80\x94\\n\"\n"
               "a.arr=arr[str]:[\"<s>\",\"\",\"\xe2\x96\x81the\"]\n");
    BOOST_TEST(notes.empty());
    check_same_metadata(m, ckplugin::gguflite::parse_metadata(text, 16, "x"));
}

BOOST_AUTO_TEST_CASE(what_cannot_read_back_exactly_is_noted) {
    ck::Metadata m;
    m.set("nan.payload", ck::Value::scalar(ck::ValueType::f32, 0x7fc00001u));
    const std::uint8_t bools[] = {0, 1, 2};
    m.set("bools", ck::Value::of_array(ck::ArrayValue::of_raw(ck::ValueType::boolean, 3,
                                                              std::as_bytes(std::span(bools)))));
    std::vector<std::string> notes;
    const std::string text = ckplugin::gguflite::encode_metadata(m, notes);
    BOOST_TEST(notes.size() == 2u);
    const ck::Metadata back = ckplugin::gguflite::parse_metadata(text, 16, "x");
    BOOST_TEST(back.find("nan.payload")->raw() == 0x7fc00000u);
    BOOST_TEST(back.find("bools")->array().raw_at(2) == 1u);
    BOOST_TEST(ckplugin::gguflite::same_after_round_trip(*m.find("bools"), *back.find("bools")));
}

BOOST_AUTO_TEST_CASE(keys_gguf_lite_cannot_hold_are_refused) {
    for (const std::string& key : {std::string("a=b"), std::string("a\nb"), std::string("\xff")}) {
        ck::Metadata m;
        m.set(key, ck::Value::of_u8(1));
        std::vector<std::string> notes;
        BOOST_CHECK_THROW(ckplugin::gguflite::encode_metadata(m, notes), ck::Error);
    }
    ck::Metadata m;
    m.set("bad.utf8", ck::Value::of_string("\xc3("));
    std::vector<std::string> notes;
    BOOST_CHECK_EXCEPTION(
        ckplugin::gguflite::encode_metadata(m, notes), ck::Error, [](const ck::Error& e) {
            return e.subject() == "key 'bad.utf8'" && contains(e.message(), "UTF-8");
        });
}

BOOST_AUTO_TEST_CASE(hand_written_lines_without_a_type_are_strings) {
    cktest::TempDir dir;
    gltest::FileBuilder b;
    b.metadata =
        "general.name=My hand-made model\r\n"
        "\n"
        "source.url=https://example.org/a:b\n"
        "note=x=y, and: more\n"
        "general.architecture=str:\"llama\"\n"
        "answer=u32:42";  // no final newline
    b.add_f32("w", {2, 3});
    cktest::write_file(dir / "hand.gguflite", b.bytes());

    ck::RecordingContext context;
    ckplugin::gguflite::GgufLiteReader reader(context);
    const ck::ModelHeader h = reader.open(dir / "hand.gguflite");
    BOOST_TEST_REQUIRE(h.metadata.size() == 5u);
    BOOST_TEST(h.metadata.find("general.name")->str() == "My hand-made model");
    BOOST_TEST(h.metadata.find("source.url")->str() == "https://example.org/a:b");
    BOOST_TEST(h.metadata.find("note")->str() == "x=y, and: more");
    BOOST_TEST(h.metadata.find("general.architecture")->str() == "llama");
    BOOST_TEST((h.metadata.find("answer")->type() == ck::ValueType::u32));
    BOOST_TEST(h.metadata.find("answer")->raw() == 42u);

    // And through the binary into GGUF: the strings are GGUF strings.
    auto r = gltest::convert("gguflite:gguf", dir / "hand.gguflite", dir / "hand.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto kv = cktest::run_ckhost({"inspect", (dir / "hand.gguf").string(), "--kv", "source.url"});
    BOOST_TEST(kv.out == "https://example.org/a:b\n");
    kv = cktest::run_ckhost({"inspect", (dir / "hand.gguf").string(), "--json"});
    BOOST_TEST(contains(kv.out, "\"type\": \"str\""), kv.out);
}

BOOST_AUTO_TEST_CASE(broken_lines_are_refused_with_their_offset) {
    struct Case {
        std::string text;
        std::size_t offset;  // of the problem, in the section
        std::string message;
    };
    const Case cases[] = {
        {"good=u8:1\nno equals sign\n", 10, "no '='"},
        {"=u8:1\n", 0, "empty key"},
        {"k=u8:300\n", 5, "out of range for u8"},
        {"k=u8:-1\n", 5, "out of range for u8"},
        {"k=i8:1.5\n", 5, "expected an integer"},
        {"k=u32:\"7\"\n", 6, "expected a JSON number"},
        {"k=f32:1e39\n", 6, "out of range for f32"},
        {"k=f32:\"NaN\"\n", 6, "\"nan\""},
        {"k=bool:1\n", 7, "true or false"},
        {"k=str:\"open\n", 6, "not closed"},
        {"k=str:\"bad \\x\"\n", 11, "unknown escape"},
        {"k=str:\"\\ud800\"\n", 7, "surrogate"},
        {"k=str:\"a\" tail\n", 10, "unexpected text"},
        {"k=arr[u9]:[1]\n", 2, "bad array type"},
        {"k=arr[arr]:[]\n", 2, "bad array type"},
        {"k=arr[u8]:[1,2\n", 14, "',' or ']'"},
        {"k=arr[u8]:1\n", 10, "'['"},
        {"k=u8:1\nk=u8:2\n", 7, "duplicate key"},
        {"k=caf\xc3\n", 5, "not valid UTF-8"},
    };
    for (const Case& c : cases) {
        BOOST_CHECK_EXCEPTION(ckplugin::gguflite::parse_metadata(c.text, 16, "f.gguflite"),
                              ck::Error, [&](const ck::Error& e) {
                                  BOOST_TEST(e.offset().value_or(0) == 16 + c.offset, c.text);
                                  BOOST_TEST(contains(e.message(), c.message),
                                             c.text << " -> " << e.what());
                                  BOOST_TEST(contains(e.subject(), "metadata line"), e.what());
                                  return true;
                              });
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguflite_metadata
