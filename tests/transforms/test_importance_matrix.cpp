// The importance matrix loader (sdk/imatrix/importance_matrix.cpp) on llama-imatrix's own
// files (tests/data/imatrix/: the same run written as GGUF and as legacy .dat), and every
// refusal on a damaged copy of them.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "importance_matrix.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_importance_matrix {

namespace fs = std::filesystem;
using ckplugin::quantize::ImportanceMatrix;

namespace {

fs::path gguf_file() {
    return cktest::test_data() / "imatrix" / "micro-llama-f16.imatrix.gguf";
}
fs::path dat_file() {
    return cktest::test_data() / "imatrix" / "micro-llama-f16.imatrix.dat";
}

// A copy of `from` in `dir` with `edit` applied to its bytes.
fs::path damaged(const cktest::TempDir& dir, const fs::path& from, const std::string& name,
                 const std::function<void(std::vector<unsigned char>&)>& edit) {
    std::vector<unsigned char> bytes = cktest::read_file(from);
    edit(bytes);
    const fs::path out = dir / name;
    cktest::write_file(out, bytes);
    return out;
}

// Replaces the first occurrence of `what` by `with` (same length, so the file stays whole).
void replace_text(std::vector<unsigned char>& bytes, const std::string& what,
                  const std::string& with) {
    BOOST_TEST_REQUIRE(what.size() == with.size());
    const std::string text(bytes.begin(), bytes.end());
    const std::size_t at = text.find(what);
    BOOST_TEST_REQUIRE(at != std::string::npos, "no '" << what << "' in the file");
    std::memcpy(bytes.data() + at, with.data(), with.size());
}

// The message of the ck::Error that loading `path` throws (fails the test if none).
std::string refusal(const fs::path& path) {
    try {
        (void)ImportanceMatrix::load(path);
    } catch (const ck::Error& e) {
        return e.what();
    }
    BOOST_FAIL("loading " << path << " was not refused");
    return {};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(importance_matrix)

// The two forms of one llama-imatrix run load to the same weights, bit for bit (the GGUF's
// in_sum2 / counts and the .dat's mean * ncall / ncall agree here), with its metadata.
BOOST_AUTO_TEST_CASE(gguf_and_dat_load_to_the_same_weights) {
    const ImportanceMatrix gguf = ImportanceMatrix::load(gguf_file());
    const ImportanceMatrix dat = ImportanceMatrix::load(dat_file());
    BOOST_TEST(gguf.size() == 15u);  // 7 matrices x 2 layers + output.weight
    BOOST_TEST(dat.size() == gguf.size());
    BOOST_TEST(!gguf.legacy());
    BOOST_TEST(dat.legacy());
    BOOST_TEST(gguf.dataset() == "gpl-3.txt");
    BOOST_TEST(dat.dataset() == "gpl-3.txt");
    BOOST_TEST(gguf.chunk_count() == 10);
    BOOST_TEST(dat.chunk_count() == 10);
    BOOST_TEST(gguf.find("token_embd.weight") == nullptr);
    for (const auto& [name, weights] : gguf.entries()) {
        const ImportanceMatrix::Entry* other = dat.find(name);
        BOOST_TEST_REQUIRE(other != nullptr, name << " missing from the .dat");
        BOOST_TEST_REQUIRE(other->size() == weights.size(), name);
        BOOST_TEST(std::memcmp(other->data(), weights.data(), weights.size() * sizeof(float)) == 0,
                   name << ": the two forms load to different weights");
    }
}

// The GGUF weights are in_sum2 / lround(count), recomputed here from the file's own tensors.
BOOST_AUTO_TEST_CASE(gguf_weights_are_sums_over_rounded_counts) {
    const ImportanceMatrix m = ImportanceMatrix::load(gguf_file());
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(gguf_file());
    const auto floats = [&](const std::string& name) {
        for (std::size_t i = 0; i < header.tensors.size(); ++i)
            if (header.tensors[i].name == name) {
                const ck::TensorView v = reader.tensor(i);
                std::vector<float> out(v.size() / 4);
                ck::le::load_array(v.data(), out.data(), out.size());
                return out;
            }
        BOOST_FAIL("no tensor " << name);
        return std::vector<float>{};
    };
    const std::string name = "blk.1.ffn_down.weight";
    const std::vector<float> sums = floats(name + ".in_sum2"), counts = floats(name + ".counts");
    const ImportanceMatrix::Entry& w = *m.find(name);
    BOOST_TEST_REQUIRE(w.size() == sums.size());
    BOOST_TEST_REQUIRE(counts.size() == 1u);
    const auto count = static_cast<float>(std::lround(counts[0]));
    BOOST_TEST(count == 1280.0f);  // 10 chunks of 128 tokens
    for (std::size_t i = 0; i < w.size(); ++i) BOOST_TEST(w[i] == sums[i] / count);
}

// llama-quantize's --include-weights / --exclude-weights: substrings of entry names, the
// counts its README records for the reference runs.
BOOST_AUTO_TEST_CASE(include_and_exclude_match_names_by_substring) {
    ImportanceMatrix included = ImportanceMatrix::load(gguf_file());
    included.filter({"blk.0.", "attn_v"}, {});
    BOOST_TEST(included.size() == 8u);  // layer 0's 7, and blk.1.attn_v
    BOOST_TEST(included.find("blk.1.attn_v.weight") != nullptr);
    BOOST_TEST(included.find("blk.1.attn_q.weight") == nullptr);
    ImportanceMatrix excluded = ImportanceMatrix::load(gguf_file());
    excluded.filter({}, {"ffn_up", "blk.1.attn", "output"});
    BOOST_TEST(excluded.size() == 7u);
    BOOST_TEST(excluded.find("output.weight") == nullptr);
    BOOST_TEST(excluded.find("blk.0.attn_q.weight") != nullptr);
}

// What llama-quantize refuses, refused with the entry or key named.
BOOST_AUTO_TEST_CASE(damaged_files_are_refused_naming_the_problem) {
    cktest::TempDir dir;
    const auto expect = [](const fs::path& path, std::initializer_list<const char*> parts) {
        const std::string message = refusal(path);
        for (const char* part : parts)
            BOOST_TEST(cktest::contains(message, part), "'" << part << "' not in: " << message);
    };
    expect(damaged(dir, gguf_file(), "no-size.gguf",
                   [](auto& b) { replace_text(b, "imatrix.chunk_size", "imatrix.chunk_sizX"); }),
           {"missing imatrix metadata", "imatrix.chunk_size"});
    expect(damaged(dir, gguf_file(), "no-counts.gguf",
                   [](auto& b) {
                       replace_text(b, "blk.0.attn_k.weight.counts", "blk.0.attn_k.weight.countX");
                   }),
           {"blk.0.attn_k.weight", "counts"});
    // A NaN in the .dat's first value (after the count, the name's length and name, ncall, nval).
    expect(damaged(dir, dat_file(), "nan.dat",
                   [](auto& b) {
                       const std::size_t name = 4 + 4, first = name + 19 + 4 + 4;
                       const float nan = std::numeric_limits<float>::quiet_NaN();
                       ck::le::store(b.data() + first, nan);
                   }),
           {"non-finite", "blk.0.attn_k.weight"});
    expect(damaged(dir, dat_file(), "cut.dat", [](auto& b) { b.resize(1000); }),
           {"value count 256 does not fit the file", "blk.0.attn_k.weight"});
    expect(damaged(dir, dat_file(), "cut-name.dat", [](auto& b) { b.resize(12); }),
           {"file ends inside name"});
    expect(damaged(dir, dat_file(), "empty.dat", [](auto& b) { b.assign(4, 0); }), {"no entries"});
    expect(damaged(dir, dat_file(), "negative.dat",
                   [](auto& b) { std::memset(b.data() + 4, 0xff, 4); }),
           {"negative name length"});
    expect(dir / "absent.imatrix", {"absent.imatrix"});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_importance_matrix
