// Malformed GGUF-lite files, crafted here, one per rule of docs/formats/gguf-lite.md: through the
// real binary each is exit 1 with one line naming the file, the byte offset and the problem, and no
// output is left behind.
#include <boost/test/unit_test.hpp>

#include <functional>

#include "gguflite_test_files.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguflite_bad_files {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

struct BadFile {
    std::string name;
    std::vector<unsigned char> bytes;
    std::uint64_t offset;  // where the error must point
    std::string message;   // a phrase the error must contain
};

// A valid base: metadata, an F32 1-D tensor, a Q8 [2, 3] and a Q4 [1, 64] tensor, packed.
gltest::FileBuilder base() {
    gltest::FileBuilder b;
    b.metadata = "general.name=str:\"bad\"\nx=u32:1\n";
    b.add_f32("norm", {4});
    const std::uint64_t q8_at = b.data.size();
    b.data.insert(b.data.end(), 2 * 2 + 2 * 3, 0x3c);
    b.tensors.push_back({"q8", {2, 3}, 2, q8_at});
    const std::uint64_t q4_at = b.data.size();
    b.data.insert(b.data.end(), 2 + 32, 0x11);
    b.tensors.push_back({"q4", {1, 64}, 3, q4_at});
    return b;
}

BadFile make(const std::string& name, const std::function<void(gltest::FileBuilder&)>& edit,
             const std::function<std::uint64_t(const gltest::FileBuilder&)>& offset,
             const std::string& message) {
    gltest::FileBuilder b = base();
    edit(b);
    return {name, b.bytes(), offset(b), message};
}

std::vector<BadFile> bad_files() {
    using B = gltest::FileBuilder;
    std::vector<BadFile> files;
    auto add = [&](BadFile f) { files.push_back(std::move(f)); };
    auto at = [](std::uint64_t n) { return [n](const B&) { return n; }; };

    // Header.
    add(make(
        "magic_gguf", [](B& b) { b.magic_value = 0x46554747; }, at(0), "bad magic"));
    add(make(
        "magic_big_endian", [](B& b) { b.magic_value = 0x54464C47; }, at(0), "big-endian"));
    add(make(
        "version_2", [](B& b) { b.version = 2; }, at(4), "version 2"));
    add({"truncated_header", {0x54, 0x46, 0x4c, 0x47, 1, 0, 0, 0, 3, 0}, 8, "file ends inside"});
    add({"empty", {}, 0, "empty file"});
    add(make(
        "metadata_past_eof", [](B& b) { b.metadata_len = 1u << 30; }, at(12),
        "runs past the end of the file"));
    add(make(
        "n_tensors_too_many", [](B& b) { b.n_tensors = 100000; }, at(8), "cannot fit"));

    // Descriptors.
    add(make(
        "descriptor_past_eof",
        [](B& b) {
            b.data.clear();
            b.tensors.resize(1);
            b.n_tensors = 2;    // a second descriptor in what is left of the file:
            b.data.resize(16);  // its name length (30) fits, its name does not
            b.data[0] = 30;
        },
        [](const B& b) { return b.fields(0).offset + 8 + 2; }, "file ends inside the tensor name"));
    add(make(
        "n_dims_0", [](B& b) { b.tensors[0].dims.clear(); },
        [](const B& b) { return b.fields(0).n_dims; }, "n_dims is 0"));
    add(make(
        "n_dims_9", [](B& b) { b.tensors[0].dims.assign(9, 1); },
        [](const B& b) { return b.fields(0).n_dims; }, "n_dims is 9"));
    add(make(
        "dtype_4", [](B& b) { b.tensors[1].dtype = 4; },
        [](const B& b) { return b.fields(1).dtype; }, "dtype 4 is unknown"));
    add(make(
        "zero_size",
        [](B& b) {
            b.tensors[1].dims = {2, 0};
        },
        [](const B& b) { return b.fields(1).dims + 4; }, "zero-size"));
    add(make(
        "shape_overflow", [](B& b) { b.tensors[0].dims.assign(3, 0xffffffffu); },
        [](const B& b) { return b.fields(0).dims; }, "overflows"));
    add(make(
        "duplicate_name", [](B& b) { b.tensors[2].name = "q8"; },
        [](const B& b) { return b.fields(2).start; }, "duplicate tensor name"));
    add(make(
        "name_not_utf8", [](B& b) { b.tensors[0].name = "n\xffm"; },
        [](const B& b) { return b.fields(0).start + 2 + 1; }, "not valid UTF-8"));
    add(make(
        "q8_not_2d",
        [](B& b) {
            b.tensors[1].dims = {2, 3, 1};
        },
        [](const B& b) { return b.fields(1).dtype; }, "needs a 2-D tensor"));
    add(make(
        "q4_on_1d", [](B& b) { b.tensors[2].dims = {64}; },
        [](const B& b) { return b.fields(2).dtype; }, "needs a 2-D tensor"));
    add(make(
        "q4_inner_dim_100",
        [](B& b) {
            b.tensors[2].dims = {1, 100};
            b.data.resize(b.data.size() + 100);  // room enough: the shape itself is the problem
        },
        [](const B& b) { return b.fields(2).dims + 4; }, "not a multiple of 64"));

    // Data.
    add(make(
        "data_offset_past_eof", [](B& b) { b.tensors[1].offset = 1u << 20; },
        [](const B& b) { return b.fields(1).offset; }, "runs past the end of the file"));
    add(make(
        "data_truncated", [](B& b) { b.data.pop_back(); },
        [](const B& b) { return b.fields(2).offset; }, "runs past the end of the file"));
    add(make(
        "overlapping", [](B& b) { b.tensors[2].offset = b.tensors[1].offset + 4; },
        [](const B& b) { return b.fields(2).offset; }, "overlaps tensor 1 'q8'"));
    add(make(
        "same_offset", [](B& b) { b.tensors[0].offset = b.tensors[1].offset; },
        [](const B& b) { return b.fields(1).offset; }, "overlaps tensor 0 'norm'"));

    // Metadata lines.
    add(make(
        "metadata_no_equals", [](B& b) { b.metadata = "general.name=str:\"a\"\nbroken\n"; },
        [](const B& b) { return b.metadata_start() + 21; }, "no '='"));
    add(make(
        "metadata_bad_json", [](B& b) { b.metadata = "n=u32:4x\n"; },
        [](const B& b) { return b.metadata_start() + 7; }, "unexpected text"));
    add(make(
        "metadata_bad_type", [](B& b) { b.metadata = "n=arr[float]:[1]\n"; },
        [](const B& b) { return b.metadata_start() + 2; }, "bad array type"));
    add(make(
        "metadata_raw_newline_in_string", [](B& b) { b.metadata = "s=str:\"a\nb\"\n"; },
        [](const B& b) { return b.metadata_start() + 6; }, "not closed"));
    return files;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguflite_bad_files)

BOOST_AUTO_TEST_CASE(each_rule_is_exit_1_with_the_offset_and_no_output) {
    cktest::TempDir in;
    std::size_t checked = 0;
    for (const BadFile& f : bad_files()) {
        const fs::path file = in / (f.name + ".gguflite");
        cktest::write_file(file, f.bytes);
        cktest::TempDir out;
        auto r = gltest::convert("gguflite:gguf", file, out / "o.gguf");
        BOOST_TEST(r.exit_code == 1, f.name << ": " << r.err);
        const std::string where = file.string() + ": byte " + std::to_string(f.offset) + ": ";
        BOOST_TEST(contains(r.err, where), f.name << ": expected '" << where << "' in " << r.err);
        BOOST_TEST(contains(r.err, f.message),
                   f.name << ": expected '" << f.message << "' in " << r.err);
        BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, f.name << ": " << r.err);
        BOOST_TEST(out.entries().empty(), f.name);
        ++checked;
    }
    BOOST_TEST(checked >= 25u);
}

BOOST_AUTO_TEST_CASE(inspect_and_verify_refuse_them_too) {
    cktest::TempDir in;
    for (const BadFile& f : bad_files()) {
        if (f.name.starts_with("magic") || f.name == "empty" || f.name == "truncated_header")
            continue;  // not recognised as GGUF-lite at all: covered by the pipeline test
        const fs::path file = in / (f.name + ".gguflite");
        cktest::write_file(file, f.bytes);
        for (const std::string command : {"inspect", "verify"}) {
            auto r = cktest::run_ckhost({command, file.string()});
            BOOST_TEST(r.exit_code == 1, command << " " << f.name);
            BOOST_TEST(contains(r.err, "byte " + std::to_string(f.offset)), f.name << r.err);
        }
    }
}

BOOST_AUTO_TEST_CASE(the_valid_base_is_accepted) {
    cktest::TempDir dir;
    cktest::write_file(dir / "base.gguflite", base().bytes());
    auto r = cktest::run_ckhost({"verify", (dir / "base.gguflite").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "OK (gguflite, 3 tensors)"), r.out);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguflite_bad_files
