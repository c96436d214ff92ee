// Split sets made by llama.cpp's llama-gguf-split (../shared/testdata/split/): any shard opens
// the whole set as one model, which gguf:gguf writes as the bytes of `llama-gguf-split --merge`;
// every way a set can be broken is exit 1 naming the file at fault, with nothing written.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "inspect_output.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguf_split_read {

namespace fs = std::filesystem;
using cktest::contains;
namespace utf = boost::unit_test;

namespace {

// A set on disk: its directory and the name its shards share before -0000K-of-00003.gguf.
struct SplitSet {
    fs::path dir;
    std::string stem;
    fs::path shard(int k) const {
        return dir / (stem + "-0000" + std::to_string(k) + "-of-00003.gguf");
    }
    fs::path merged() const { return dir / (stem + ".merged.gguf"); }
};

// The committed set (tests/data/split, always present) and the two shared ones.
SplitSet micro_set() {
    return {cktest::test_data() / "split", "micro-llama-q4_k_m"};
}
SplitSet shared_set(const char* which) {
    return {*cktest::shared_data() / "split" / which, "tiny-llama-q4_k_m"};
}

// A writable copy of the committed set in `dir`.
SplitSet copy_set(const fs::path& dir) {
    const SplitSet from = micro_set();
    const SplitSet to{dir, from.stem};
    for (int k = 1; k <= 3; ++k) fs::copy_file(from.shard(k), to.shard(k));
    return to;
}

std::size_t find_bytes(const std::vector<unsigned char>& bytes, std::string_view what) {
    auto at = std::search(bytes.begin(), bytes.end(), what.begin(), what.end());
    BOOST_TEST_REQUIRE((at != bytes.end()), "'" << what << "' not in the file");
    return static_cast<std::size_t>(at - bytes.begin());
}

// Overwrites the value of metadata key `key` (a fixed-size scalar of `size` bytes) in `file`:
// the value follows the key's bytes and its 4-byte type.
void patch_value(const fs::path& file, std::string_view key, std::uint32_t value,
                 std::size_t size) {
    auto bytes = cktest::read_file(file);
    const std::size_t at = find_bytes(bytes, key) + key.size() + 4;
    for (std::size_t i = 0; i < size; ++i) bytes[at + i] = (value >> (8 * i)) & 0xff;
    cktest::write_file(file, bytes);
}

void rename_tensor(const fs::path& file, std::string_view from, std::string_view to) {
    BOOST_TEST_REQUIRE(from.size() == to.size());
    auto bytes = cktest::read_file(file);
    std::memcpy(&bytes[find_bytes(bytes, from)], to.data(), to.size());
    cktest::write_file(file, bytes);
}

// Converting `input` fails with exit 1, a message naming `culprit` and holding `what`, and
// leaves no output.
void expect_refused(const fs::path& input, const fs::path& culprit, const std::string& what) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", input.string(), "-o", (out / "m.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, culprit.string()), r.err);
    BOOST_TEST(contains(r.err, what), r.err);
    BOOST_TEST(out.entries().empty());
}

// Every shard of `set` converts to the bytes of its merged file.
void check_merges(const SplitSet& set, const fs::path& merged) {
    for (int k = 1; k <= 3; ++k) {
        cktest::TempDir out;
        auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", set.shard(k).string(), "-o",
                                     (out / "m.gguf").string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, set.shard(k) << ": " << r.err);
        BOOST_TEST(cktest::files_equal(out / "m.gguf", merged), set.shard(k));
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_split_read)

// Whichever shard is given, the result is llama-gguf-split --merge's file byte for byte (it
// keeps the three split.* keys with split.count = 0).
BOOST_AUTO_TEST_CASE(any_shard_merges_to_the_reference_bytes) {
    check_merges(micro_set(), micro_set().merged());
}

// Both shared sets (cut by size and by tensor count) merge to the same reference file.
BOOST_AUTO_TEST_CASE(shared_sets_merge_to_the_reference_bytes,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path merged = *cktest::shared_data() / "split" / "tiny-llama-q4_k_m.merged.gguf";
    for (const char* which : {"by-size", "by-tensors"}) check_merges(shared_set(which), merged);
}

// A merged file (split.count = 0) is a single file and copies as it is.
BOOST_AUTO_TEST_CASE(merged_file_is_a_single_file) {
    const fs::path merged = micro_set().merged();
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", merged.string(), "-o", (out / "m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(out / "m.gguf", merged));
    auto v = cktest::run_ckhost({"verify", merged.string()});
    BOOST_TEST(v.exit_code == 0, v.err);
    BOOST_TEST(!contains(v.out, "split set"), v.out);
}

// `-o DIR/` names the output after the set, not after the shard that was given.
BOOST_AUTO_TEST_CASE(directory_output_is_named_after_the_set) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", micro_set().shard(2).string(),
                                 "-o", out.path().string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(out.entries() == std::vector<std::string>{"micro-llama-q4_k_m.gguf"});
}

BOOST_AUTO_TEST_CASE(inspect_and_verify_say_it_is_a_set) {
    const SplitSet set = micro_set();
    auto i = cktest::run_ckhost({"inspect", set.shard(3).string()});
    BOOST_TEST_REQUIRE(i.exit_code == 0, i.err);
    BOOST_TEST(contains(i.out, "split files: 3\n"), i.out);
    for (int k = 1; k <= 3; ++k) BOOST_TEST(contains(i.out, set.shard(k).string()), i.out);
    BOOST_TEST(contains(i.out, "tensors: 21"), i.out);
    BOOST_TEST(contains(cktest::squeezed(i.out), "  split.count  u16  0\n"), i.out);

    auto v = cktest::run_ckhost({"verify", set.shard(3).string()});
    BOOST_TEST(v.exit_code == 0, v.err);
    BOOST_TEST(contains(v.out, "OK (gguf, 21 tensors; split set of 3 files"), v.out);

    auto j = cktest::run_ckhost({"verify", "--json", set.shard(3).string()});
    BOOST_TEST_REQUIRE(j.exit_code == 0, j.err);
    auto doc = nlohmann::json::parse(j.out);
    BOOST_TEST(doc.at("facts").at("split_files").get<int>() == 3);
    BOOST_TEST(doc.at("facts").at("shard_1_file").get<std::string>() == set.shard(1).string());
    BOOST_TEST(doc.at("facts").at("shard_1_tensors").get<int>() == 8);
}

// Issue 28: inspect of shard K describes file K (its size, where its data starts), says which
// shard of how many it is, and gives the set's totals apart.
BOOST_AUTO_TEST_CASE(inspect_of_a_shard_describes_that_shard) {
    const SplitSet set = micro_set();
    std::uint64_t set_size = 0;
    for (int k = 1; k <= 3; ++k) set_size += fs::file_size(set.shard(k));
    std::uint64_t first = 0;  // index of the shard's first tensor in the model
    for (int k = 1; k <= 3; ++k) {
        auto r = cktest::run_ckhost({"inspect", set.shard(k).string(), "--json", "--tensors"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const auto doc = nlohmann::json::parse(r.out);
        const auto& facts = doc.at("facts");
        BOOST_TEST(facts.at("file_size").get<std::uint64_t>() == fs::file_size(set.shard(k)), k);
        BOOST_TEST(facts.at("shard").get<int>() == k);
        BOOST_TEST(facts.at("split_files").get<int>() == 3);
        BOOST_TEST(facts.at("set_file_size").get<std::uint64_t>() == set_size);
        // ggml packs a file's tensors, each padded to the alignment, from the data start to
        // the end: the shard's own tensors fill exactly what follows its data start.
        const std::uint64_t alignment = facts.at("alignment").get<std::uint64_t>();
        const int count = facts.at("shard_" + std::to_string(k) + "_tensors").get<int>();
        std::uint64_t data = 0;
        for (int i = 0; i < count; ++i) {
            const std::uint64_t n =
                doc.at("tensors").at(first + static_cast<std::uint64_t>(i)).at("bytes");
            data += (n + alignment - 1) / alignment * alignment;
        }
        BOOST_TEST(
            facts.at("data_start").get<std::uint64_t>() == fs::file_size(set.shard(k)) - data, k);
        BOOST_TEST(doc.at("tensors").at(first).at("offset").get<std::uint64_t>() ==
                       facts.at("data_start").get<std::uint64_t>(),
                   k);
        first += static_cast<std::uint64_t>(count);
    }
    auto text = cktest::run_ckhost({"inspect", set.shard(2).string()});
    BOOST_TEST(contains(text.out, "  file size: " + std::to_string(fs::file_size(set.shard(2))) +
                                      "\n  byte order: little-endian\n  shard: 2\n  split "
                                      "files: 3\n  set file size: " +
                                      std::to_string(set_size) + "\n"),
               text.out);
}

BOOST_AUTO_TEST_CASE(missing_shard) {
    cktest::TempDir dir;
    const SplitSet set = copy_set(dir.path());
    fs::remove(set.shard(2));
    expect_refused(set.shard(1), set.shard(2), "shard 2 of 3 of the split set is missing");
    // From the last shard too: the set is found from any member.
    expect_refused(set.shard(3), set.shard(2), "is missing");
}

BOOST_AUTO_TEST_CASE(shard_of_a_set_with_another_count) {
    cktest::TempDir dir;
    const SplitSet set = copy_set(dir.path());
    patch_value(set.shard(3), "split.count", 4, 2);
    expect_refused(set.shard(1), set.shard(3), "split.count is 4, but the set opened from");
}

BOOST_AUTO_TEST_CASE(shard_number_present_twice) {
    cktest::TempDir dir;
    const SplitSet set = copy_set(dir.path());
    fs::copy_file(set.shard(1), set.shard(2), fs::copy_options::overwrite_existing);
    expect_refused(set.shard(1), set.shard(2), "split.no is 0, but the file is named as shard 2");
}

BOOST_AUTO_TEST_CASE(tensor_in_two_shards) {
    cktest::TempDir dir;
    const SplitSet set = copy_set(dir.path());
    rename_tensor(set.shard(2), "blk.1.attn_q.weight", "blk.0.attn_q.weight");
    expect_refused(set.shard(1), set.shard(2),
                   "tensor 'blk.0.attn_q.weight' is also in shard 1 of 3");
}

BOOST_AUTO_TEST_CASE(tensor_total_disagrees) {
    cktest::TempDir dir;
    const SplitSet set = copy_set(dir.path());
    for (int k = 1; k <= 3; ++k) patch_value(set.shard(k), "split.tensors.count", 22, 4);
    expect_refused(set.shard(1), set.shard(1), "hold 21 tensors, but split.tensors.count says 22");
    // One shard disagreeing with the others belongs to another set.
    cktest::TempDir other;
    const SplitSet mixed = copy_set(other.path());
    patch_value(mixed.shard(2), "split.tensors.count", 22, 4);
    expect_refused(mixed.shard(1), mixed.shard(2), "split.tensors.count is 22");
}

// A file under a shard's name that is not a shard at all (here the merged model).
BOOST_AUTO_TEST_CASE(foreign_file_under_a_shard_name) {
    cktest::TempDir dir;
    const SplitSet set = copy_set(dir.path());
    fs::copy_file(micro_set().merged(), set.shard(3), fs::copy_options::overwrite_existing);
    expect_refused(set.shard(1), set.shard(3), "but it is not a shard");
}

// A shard that is broken on its own is refused with the reader's own message.
BOOST_AUTO_TEST_CASE(truncated_shard) {
    cktest::TempDir dir;
    const SplitSet set = copy_set(dir.path());
    fs::resize_file(set.shard(3), fs::file_size(set.shard(3)) - 1000);
    expect_refused(set.shard(2), set.shard(3), "runs past the end of the file");
}

// A lone shard whose name no longer says where its set is: refused, never converted partially.
BOOST_AUTO_TEST_CASE(renamed_lone_shard) {
    for (int k = 1; k <= 3; ++k) {
        cktest::TempDir dir;
        fs::copy_file(micro_set().shard(k), dir / "model.gguf");
        expect_refused(dir / "model.gguf", dir / "model.gguf",
                       "shard " + std::to_string(k) + " of 3 of a split set");
        expect_refused(dir / "model.gguf", dir / "model.gguf",
                       "-0000" + std::to_string(k) + "-of-00003.gguf");
        auto i = cktest::run_ckhost({"inspect", (dir / "model.gguf").string()});
        BOOST_TEST(i.exit_code == 1, i.err);
    }
}

BOOST_AUTO_TEST_SUITE_END()

// The writer's split of the sample reproduces the committed llama-gguf-split set, and reading
// that set back merges it: the whole cycle without the shared data.
BOOST_AUTO_TEST_SUITE(gguf_split_cycle)

BOOST_AUTO_TEST_CASE(split_like_llama_gguf_split_then_merge_back) {
    const SplitSet reference = micro_set();
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i",
                                 (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string(),
                                 "-o", (out / "micro-llama-q4_k_m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const SplitSet ours{out.path(), "micro-llama-q4_k_m"};
    for (int k = 1; k <= 3; ++k)
        BOOST_TEST(cktest::files_equal(ours.shard(k), reference.shard(k)), "shard " << k);
    BOOST_TEST(out.entries().size() == 3u);
    check_merges(ours, reference.merged());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_split_read
