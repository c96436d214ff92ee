// What a conversion says it will write is what it writes: `--dry-run`'s sizes are the files'
// sizes, bump's position embeddings are stated (and refused when they would dwarf the model),
// and `-o PATH` for a writer of several files makes PATH a directory when nothing is there.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_planned_outputs {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

// Everything under `dir`, sorted.
std::vector<std::string> sorted_entries(const cktest::TempDir& dir) {
    std::vector<std::string> names = dir.entries();
    std::sort(names.begin(), names.end());
    return names;
}

// "output: PATH (N bytes)" lines of a plan.
std::map<std::string, std::uintmax_t> planned_sizes(const std::string& plan) {
    std::map<std::string, std::uintmax_t> sizes;
    std::istringstream lines(plan);
    for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with("output: ") || !line.ends_with(" bytes)")) continue;
        const auto open = line.rfind(" (");
        sizes[line.substr(8, open - 8)] =
            std::stoull(line.substr(open + 2, line.size() - open - 2 - 7));
    }
    return sizes;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planned_outputs)

// The bug of issue 16: `-o newdir` wrote a bump file named newdir and ./config.json.
BOOST_AUTO_TEST_CASE(a_new_path_without_extension_is_a_directory_for_bump) {
    cktest::TempDir out;
    const fs::path target = out / "newdir";
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:headpack:bump", "-i", sample(), "-o", target.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_directory(target));
    BOOST_TEST(fs::is_regular_file(target / "weights.bump"));
    BOOST_TEST(fs::is_regular_file(target / "config.json"));
    BOOST_TEST(sorted_entries(out) ==
               (std::vector<std::string>{"newdir", "newdir/config.json", "newdir/weights.bump"}));
    BOOST_TEST(contains(r.err, "-o " + target.string() + " does not exist"), r.err);
    BOOST_TEST(contains(r.err, "taken as a new directory"), r.err);

    // A name ending in .bump is still the bump file, with config.json beside it; an existing
    // file stays a file (replaced with --force); DIR/ is a directory as before.
    cktest::TempDir named;
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:headpack:bump", "-i", sample(), "-o", (named / "m.bump").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(sorted_entries(named) == (std::vector<std::string>{"config.json", "m.bump"}));
    BOOST_TEST(!contains(r.err, "new directory"), r.err);
    r = cktest::run_ckhost({"--force", "--pipeline", "gguf:headpack:bump", "-i", sample(), "-o",
                            (named / "m.bump").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(sorted_entries(named) == (std::vector<std::string>{"config.json", "m.bump"}));
    cktest::TempDir slash;
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:headpack:bump", "-i", sample(), "-o", (slash / "d").string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_regular_file(slash / "d" / "weights.bump"));
}

BOOST_AUTO_TEST_CASE(dry_run_sizes_are_the_written_sizes) {
    for (const std::string pipeline :
         {"gguf:gguf", "gguf:headpack:bump", "gguf:dequant:safetensors",
          "gguf:repack[to=int8]:safetensors", "gguf:gguflite[scheme=q8]",
          "gguf:dequant[to=f16]:gguflite[scheme=q4]", "gguf:gguf[split_max_tensors=8]",
          "gguf:quantize[mix=q8_0,requantize=1]:gguf[endian=big]", "gguf:bump[context=300]"}) {
        cktest::TempDir out;
        const std::string target = (out / "o").string() + "/";
        auto plan = cktest::run_ckhost(
            {"--dry-run", "-q", "--pipeline", pipeline, "-i", sample(), "-o", target});
        BOOST_TEST_REQUIRE(plan.exit_code == 0, pipeline << ": " << plan.err);
        BOOST_TEST(out.entries().empty(), pipeline);
        const auto sizes = planned_sizes(plan.out);
        BOOST_TEST_REQUIRE(!sizes.empty(), pipeline << ": " << plan.out);
        std::uintmax_t total = 0;
        for (const auto& [path, bytes] : sizes) total += bytes;

        auto run = cktest::run_ckhost(
            {"-q", "--json", "--pipeline", pipeline, "-i", sample(), "-o", target});
        BOOST_TEST_REQUIRE(run.exit_code == 0, pipeline << ": " << run.err);
        std::size_t files = 0;
        for (const auto& entry : fs::recursive_directory_iterator(out.path()))
            files += entry.is_regular_file();
        BOOST_TEST(files == sizes.size(), pipeline);
        for (const auto& [path, bytes] : sizes)
            BOOST_TEST(fs::file_size(path) == bytes, pipeline << ": " << path);
        BOOST_TEST(contains(run.out, "\"bytes_out\": " + std::to_string(total)), pipeline);
        BOOST_TEST(contains(plan.out, " out (" + std::to_string(sizes.size()) + " file"),
                   pipeline << ": " << plan.out);
    }
}

BOOST_AUTO_TEST_CASE(bump_states_and_bounds_the_position_embeddings) {
    cktest::TempDir out;
    // The plan says how large the zero position embeddings are, for the model's own context.
    auto r = cktest::run_ckhost({"--dry-run", "--pipeline", "gguf:headpack:bump", "-i", sample(),
                                 "-o", out.path().string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "bump: position embeddings: context "), r.err);
    BOOST_TEST(contains(r.err, "(the model's)"), r.err);

    // context=1000000 on the 1.3 MB sample would write about 1 GB of zeros: refused, naming the
    // size, before anything is written.
    r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump[context=1000000]", "-i", sample(),
                            "-o", (out / "big").string() + "/"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(
        contains(r.err, "bump[context=1000000]: the position embeddings: context 1000000 x "),
        r.err);
    BOOST_TEST(contains(r.err, " MiB)"), r.err);
    BOOST_TEST(contains(r.err, "context_ok=1"), r.err);
    BOOST_TEST(out.entries().empty());

    // Confirmed, the plan gives the size that would be written (nothing is, with --dry-run).
    r = cktest::run_ckhost({"--dry-run", "--pipeline",
                            "gguf:headpack:bump[context=1000000,context_ok=1]", "-i", sample(),
                            "-o", (out / "big").string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto sizes = planned_sizes(r.out);
    BOOST_TEST_REQUIRE(sizes.count((out / "big" / "weights.bump").string()) == 1u, r.out);
    BOOST_TEST(sizes.at((out / "big" / "weights.bump").string()) > 1'000'000'000u);
    BOOST_TEST(out.entries().empty());

    // A context that is not the larger part of the file needs no confirmation.
    r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump[context=256]", "-i", sample(), "-o",
                            (out / "small").string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "context 256 x "), r.err);
    // context_ok takes the usual boolean values only.
    r = cktest::run_ckhost({"--dry-run", "--pipeline", "gguf:headpack:bump[context_ok=maybe]", "-i",
                            sample(), "-o", (out / "x").string() + "/"});
    BOOST_TEST(r.exit_code == 2, r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_planned_outputs
