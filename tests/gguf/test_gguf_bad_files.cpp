// Every malformed file in tests/data/bad (copied from shared/testdata/bad) is rejected or
// accepted as expected.tsv says, through the real ckhost binary: exit code, a message naming
// the file, the byte offset and the problem, and no output left behind.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguf_bad_files {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

struct Row {
    std::string file, target, strict;
};

std::vector<Row> expected_rows() {
    std::ifstream in(cktest::test_data() / "bad" / "expected.tsv");
    std::vector<Row> rows;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> cols;
        std::stringstream ss(line);
        std::string col;
        while (std::getline(ss, col, '\t')) cols.push_back(col);
        BOOST_REQUIRE(cols.size() >= 8);
        rows.push_back({cols[0], cols[1], cols[7]});
    }
    return rows;
}

// The word each rejection message must contain. Every row of expected.tsv needs an entry here,
// so a new malformed file cannot slip through untested.
const std::map<std::string, std::string> reject_keyword = {
    {"bad_magic_lowercase.gguf", "magic"},
    {"version_1.gguf", "version 1"},
    {"version_4.gguf", "version 4"},
    {"n_tensors_huge.gguf", "tensor count"},
    {"n_kv_huge.gguf", "key-value count"},
    {"n_kv_plus_one.gguf", "exceeds the maximum"},
    {"n_tensors_plus_one.gguf", "offset"},
    {"trunc_empty.gguf", "empty file"},
    {"trunc_version.gguf", "version"},
    {"trunc_n_kv.gguf", "truncated"},
    {"trunc_mid_key_len.gguf", "truncated"},
    {"trunc_mid_value_type.gguf", "truncated"},
    {"trunc_mid_u32_value.gguf", "truncated"},
    {"trunc_mid_array_data.gguf", "past the end"},
    {"trunc_mid_tensor_name.gguf", "past the end"},
    {"trunc_mid_tensor_dims.gguf", "file ends inside"},
    {"trunc_mid_tensor_offset.gguf", "file ends inside"},
    {"trunc_mid_padding.gguf", "padding"},
    {"trunc_mid_tensor_data.gguf", "past the end"},
    {"key_len_past_eof.gguf", "key length"},
    {"string_len_2_63.gguf", "string value length"},
    {"key_empty.gguf", "empty"},
    {"value_type_ffffffff.gguf", "invalid value type"},
    {"array_elem_type_13.gguf", "element type 13"},
    {"array_count_2_62.gguf", "array count"},
    {"array_count_past_eof.gguf", "past the end"},
    {"alignment_0.gguf", "alignment 0"},
    {"alignment_48.gguf", "alignment 48"},
    {"alignment_u64.gguf", "u32"},
    {"duplicate_tensor_name.gguf", "duplicate"},
    {"n_dims_5.gguf", "dimensions 5"},
    {"dim_negative.gguf", "negative"},
    {"dim_product_overflow_4d.gguf", "overflow"},
    {"dim_product_overflow_wraps_to_zero.gguf", "overflow"},  // ggml accepts it; we must not
    {"tensor_nbytes_overflow.gguf", "overflow"},
    {"tensor_type_4.gguf", "removed"},
    {"tensor_type_31.gguf", "removed"},
    {"tensor_type_43.gguf", "type 43"},
    {"tensor_type_neg1.gguf", "type -1"},
    {"tensor_type_43_q8_0_size.gguf", "type 43"},
    {"ne0_not_multiple_of_block_k.gguf", "block size"},
    {"offset_overlap.gguf", "overlap"},
    {"offset_gap.gguf", "gap"},
    {"tensor_data_past_eof.gguf", "past the end"},
};

// Our decisions for the rows expected.tsv leaves to the reader ("either"): we accept each, as
// ggml does, because each is a file ggml and llama.cpp load.
const std::map<std::string, std::string> either_decision = {
    {"key_not_ascii.gguf", "accept"},       // keys are not validated by ggml either
    {"bool_value_2.gguf", "accept"},        // read as true, with a warning
    {"alignment_1.gguf", "accept"},         // a power of two, laid out consistently
    {"tensor_name_empty.gguf", "accept"},   // gguf.md: tolerated, as ggml does
    {"n_dims_0.gguf", "accept"},            // one element
    {"tensor_type_9_q8_1.gguf", "accept"},  // valid on disk; only dequant refuses Q8_1
};

std::string decision(const Row& row) {
    if (row.strict != "either") return row.strict;
    auto it = either_decision.find(row.file);
    BOOST_REQUIRE_MESSAGE(it != either_decision.end(), "no decision recorded for " << row.file);
    return it->second;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_bad_files)

BOOST_AUTO_TEST_CASE(every_file_is_covered) {
    auto rows = expected_rows();
    BOOST_TEST(rows.size() >= 50u);
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(cktest::test_data() / "bad"))
        if (e.path().extension() == ".gguf") ++files;
    BOOST_TEST(files == rows.size());
}

BOOST_AUTO_TEST_CASE(inspect_rejects_or_accepts_as_expected) {
    for (const Row& row : expected_rows()) {
        fs::path file = cktest::test_data() / "bad" / row.file;
        auto r = cktest::run_ckhost({"inspect", file.string()});
        if (decision(row) == "accept") {
            BOOST_TEST(r.exit_code == 0, row.file << ": " << r.err);
            continue;
        }
        BOOST_TEST(r.exit_code == 1, row.file << " exit " << r.exit_code);
        auto keyword = reject_keyword.find(row.file);
        BOOST_REQUIRE_MESSAGE(keyword != reject_keyword.end(), "no keyword for " << row.file);
        BOOST_TEST(contains(r.err, keyword->second),
                   row.file << ": '" << keyword->second << "' not in: " << r.err);
        BOOST_TEST(contains(r.err, row.file),
                   row.file << ": message does not name the file: " << r.err);
        BOOST_TEST(contains(r.err, "byte "), row.file << ": message has no byte offset: " << r.err);
        BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1,
                   row.file << ": not one line: " << r.err);
    }
}

BOOST_AUTO_TEST_CASE(conversion_leaves_nothing_behind_on_reject) {
    for (const Row& row : expected_rows()) {
        if (decision(row) != "reject") continue;
        cktest::TempDir out;
        auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i",
                                     (cktest::test_data() / "bad" / row.file).string(), "-o",
                                     (out / "sub" / "out.gguf").string()});
        BOOST_TEST(r.exit_code == 1, row.file);
        BOOST_TEST(out.entries().empty(),
                   row.file << " left " << out.entries().size() << " entries");
    }
}

BOOST_AUTO_TEST_CASE(accepted_files_round_trip) {
    for (const Row& row : expected_rows()) {
        if (decision(row) != "accept") continue;
        cktest::TempDir out;
        fs::path in = cktest::test_data() / "bad" / row.file;
        auto r = cktest::run_ckhost(
            {"--pipeline", "gguf:gguf", "-i", in.string(), "-o", (out / "o.gguf").string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, row.file << ": " << r.err);
        auto a = cktest::read_file(in), b = cktest::read_file(out / "o.gguf");
        if (row.file == "trailing_garbage.gguf") {
            // Bytes after the data section are not part of the model and are not copied.
            BOOST_TEST(b.size() == a.size() - 1000);
            BOOST_TEST(std::equal(b.begin(), b.end(), a.begin()));
        } else if (row.file == "bool_value_2.gguf") {
            // We write valid files: the bool byte 2 becomes 1, nothing else changes.
            BOOST_TEST_REQUIRE(a.size() == b.size());
            std::size_t differing = 0;
            for (std::size_t i = 0; i < a.size(); ++i)
                if (a[i] != b[i]) {
                    ++differing;
                    BOOST_TEST(a[i] == 2);
                    BOOST_TEST(b[i] == 1);
                }
            BOOST_TEST(differing == 1u);
            BOOST_TEST(contains(r.err, "read as true"));
        } else {
            BOOST_TEST((a == b), row.file << " changed in a gguf:gguf round trip");
        }
    }
}

// A byte-swapped version makes the file big-endian (test_gguf_endian.cpp reads real ones), so
// a file whose version alone is swapped fails on its little-endian counts, read big-endian.
BOOST_AUTO_TEST_CASE(swapped_version_and_lfs_pointers_are_named) {
    cktest::TempDir dir;
    auto bytes = cktest::read_file(cktest::test_data() / "bad" / "valid_base.gguf");
    std::swap(bytes[4], bytes[7]);  // version 3 written big-endian
    std::swap(bytes[5], bytes[6]);
    cktest::write_file(dir / "be.gguf", bytes);
    auto r = cktest::run_ckhost({"inspect", (dir / "be.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "byte 8: n_tensors: tensor count"), r.err);

    std::string lfs = "version https://git-lfs.github.com/spec/v1\noid sha256:0000\nsize 12345\n";
    cktest::write_file(dir / "lfs.gguf", {lfs.begin(), lfs.end()});
    r = cktest::run_ckhost({"inspect", (dir / "lfs.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "Git LFS pointer"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_bad_files
