// GgufWriter in process: the alignment is honoured, quantization_version is added only where
// it must be, and a header that does not describe its tensors is refused before writing.
#include <boost/test/unit_test.hpp>

#include <bit>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguf_writer {

namespace fs = std::filesystem;

namespace {

// Writes `header` with the tensors of `source` (same order) through GgufWriter.
void write_model(const ck::ModelHeader& header, ckplugin::gguf::GgufReader& source,
                 const fs::path& path) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufWriter writer(context);
    writer.prepare(header, path);
    ck::OutputSet out(false);
    writer.begin(out);
    for (std::size_t i = 0; i < header.tensors.size(); ++i) writer.write(i, source.tensor(i));
    writer.finish();
    out.commit();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_writer)

BOOST_AUTO_TEST_CASE(changed_alignment_is_honoured) {
    cktest::TempDir dir;
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ck::ModelHeader header = reader.open(cktest::test_data() / "bad" / "valid_base.gguf");
    header.metadata.set("general.alignment", ck::Value::of_u32(256));
    write_model(header, reader, dir / "aligned.gguf");

    ckplugin::gguf::GgufReader back(context);
    ck::ModelHeader reread = back.open(dir / "aligned.gguf");
    BOOST_TEST(back.data_start() % 256 == 0u);
    BOOST_TEST_REQUIRE(reread.tensors.size() == header.tensors.size());
    for (std::size_t i = 0; i < reread.tensors.size(); ++i) {
        BOOST_TEST((reread.tensors[i].source_offset - back.data_start()) % 256 == 0u);
        auto a = reader.tensor(i).bytes(), b = back.tensor(i).bytes();
        BOOST_TEST(std::equal(a.begin(), a.end(), b.begin(), b.end()));
    }
    // The file ends with the last tensor padded to the alignment too.
    BOOST_TEST(fs::file_size(dir / "aligned.gguf") % 256 == 0u);
}

BOOST_AUTO_TEST_CASE(quantization_version_added_for_non_gguf_sources) {
    cktest::TempDir dir;
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ck::ModelHeader header = reader.open(cktest::test_data() / "bad" / "valid_base.gguf");
    BOOST_TEST_REQUIRE(
        !header.metadata.contains("general.quantization_version"));  // has a Q8_0 tensor

    write_model(header, reader, dir / "same.gguf");
    ckplugin::gguf::GgufReader same(context);
    BOOST_TEST(!same.open(dir / "same.gguf").metadata.contains("general.quantization_version"));

    header.format = "safetensors";  // as if another reader had produced the header
    write_model(header, reader, dir / "marked.gguf");
    ckplugin::gguf::GgufReader marked(context);
    const ck::ModelHeader reread = marked.open(dir / "marked.gguf");
    const ck::Value* v = reread.metadata.find("general.quantization_version");
    BOOST_TEST_REQUIRE(v != nullptr);
    BOOST_TEST((v->type() == ck::ValueType::u32));
    BOOST_TEST(v->raw() == 2u);
}

BOOST_AUTO_TEST_CASE(inconsistent_headers_are_refused_in_prepare) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader base = reader.open(cktest::test_data() / "bad" / "valid_base.gguf");
    ckplugin::gguf::GgufWriter writer(context);

    ck::ModelHeader wrong_size = base;
    wrong_size.tensors[0].nbytes += 1;
    BOOST_CHECK_EXCEPTION(writer.prepare(wrong_size, "x.gguf"), ck::Error, [](const ck::Error& e) {
        return cktest::contains(e.what(), "does not match") && !e.subject().empty();
    });

    ck::ModelHeader bad_alignment = base;
    bad_alignment.metadata.set("general.alignment", ck::Value::of_u32(48));
    BOOST_CHECK_THROW(writer.prepare(bad_alignment, "x.gguf"), ck::Error);

    ck::ModelHeader removed_type = base;
    removed_type.tensors[0].type = 4;
    BOOST_CHECK_THROW(writer.prepare(removed_type, "x.gguf"), ck::Error);

    ck::ModelHeader duplicate = base;
    duplicate.tensors[1].name = duplicate.tensors[0].name;
    BOOST_CHECK_THROW(writer.prepare(duplicate, "x.gguf"), ck::Error);
}

BOOST_AUTO_TEST_CASE(directory_destination_uses_the_input_name) {
    cktest::TempDir dir;
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ck::ModelHeader header = reader.open(cktest::test_data() / "bad" / "valid_base.gguf");
    ckplugin::gguf::GgufWriter writer(context);
    writer.prepare(header, dir.path().string() + "/");
    BOOST_TEST(writer.outputs().at(0) == dir / "valid_base.gguf");
}

BOOST_AUTO_TEST_CASE(encode_gguf_value_writes_gguf_binary_form) {
    std::vector<std::byte> out;
    std::vector<std::int32_t> ints = {-1, 7};
    ckplugin::gguf::encode_gguf_value(
        ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(ck::ValueType::i32, ints)), out);
    const std::vector<std::uint8_t> array = {5, 0, 0,    0,    2,    0,    0, 0, 0, 0,
                                             0, 0, 0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0};
    BOOST_TEST(out.size() == array.size());
    for (std::size_t i = 0; i < array.size() && i < out.size(); ++i)
        BOOST_TEST(std::to_integer<std::uint8_t>(out[i]) == array[i], "byte " << i);
    out.clear();
    ckplugin::gguf::encode_gguf_value(ck::Value::of_string("ab"), out);
    BOOST_TEST(out.size() == 10u);  // u64 length, then the bytes
    out.clear();
    ckplugin::gguf::encode_gguf_value(ck::Value::of_u32(0x01020304), out);
    BOOST_TEST(std::to_integer<int>(out[0]) == 4);
    BOOST_TEST(std::to_integer<int>(out[3]) == 1);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_writer
