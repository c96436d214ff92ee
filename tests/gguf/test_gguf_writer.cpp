// GgufWriter in process: the alignment is honoured, quantization_version is added only where
// it must be, and a header that does not describe its tensors is refused before writing.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <functional>

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

// Every tensor of `source` that has rows, in blocks of `block` rows (the last one shorter);
// single-row tensors whole.
void write_in_row_blocks(const ck::ModelHeader& header, ckplugin::gguf::GgufReader& source,
                         const fs::path& path, std::uint64_t block) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufWriter writer(context);
    BOOST_TEST_REQUIRE(writer.writes_rows());
    writer.prepare(header, path);
    ck::OutputSet out(false);
    writer.begin(out);
    for (std::size_t i = 0; i < header.tensors.size(); ++i) {
        const std::uint64_t rows = header.tensors[i].rows();
        if (rows < 2) {
            writer.write(i, source.tensor(i));
            continue;
        }
        for (std::uint64_t first = 0; first < rows; first += block) {
            const ck::RowRange range{first, std::min(block, rows - first)};
            writer.write_rows(i, range, source.tensor_rows(i, range));
        }
    }
    writer.finish();
    out.commit();
}

BOOST_AUTO_TEST_CASE(row_blocks_write_the_same_file_as_whole_tensors) {
    cktest::TempDir dir;
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(cktest::sample_model());
    write_model(header, reader, dir / "whole.gguf");
    for (std::uint64_t block : {1u, 3u, 64u}) {
        const fs::path rows = dir / ("rows-" + std::to_string(block) + ".gguf");
        write_in_row_blocks(header, reader, rows, block);
        BOOST_TEST(cktest::files_equal(dir / "whole.gguf", rows), "block " << block);
    }
}

BOOST_AUTO_TEST_CASE(row_blocks_out_of_order_are_refused_naming_the_tensor) {
    cktest::TempDir dir;
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(cktest::sample_model());
    std::size_t wide = 0;  // the first tensor of several rows
    while (header.tensors.at(wide).rows() < 4) ++wide;
    const std::string name = header.tensors[wide].name;
    auto refusal = [&](const std::function<void(ckplugin::gguf::GgufWriter&)>& wrong) {
        ckplugin::gguf::GgufWriter writer(context);
        writer.prepare(header, dir / "o.gguf");
        ck::OutputSet out(false);
        writer.begin(out);
        for (std::size_t i = 0; i < wide; ++i) writer.write(i, reader.tensor(i));
        try {
            wrong(writer);
        } catch (const ck::Error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    const ck::RowRange second{2, 2}, first{0, 2}, beyond{0, header.tensors[wide].rows() + 1};
    // A block that skips rows, a whole tensor after its first block, a block past the end.
    for (const std::string& message :
         {refusal([&](auto& w) { w.write_rows(wide, second, reader.tensor_rows(wide, second)); }),
          refusal([&](auto& w) {
              w.write_rows(wide, first, reader.tensor_rows(wide, first));
              w.write(wide, reader.tensor(wide));
          }),
          refusal([&](auto& w) { w.write_rows(wide, beyond, reader.tensor(wide)); })}) {
        BOOST_TEST(cktest::contains(message, name), message);
        BOOST_TEST(message != "accepted");
    }
    BOOST_TEST(!fs::exists(dir / "o.gguf"));  // never committed
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_writer
