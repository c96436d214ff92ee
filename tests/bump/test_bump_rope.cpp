// RoPE scaling and bump: C-Kernel-Engine's bump v3 and v4 runtimes compute RoPE from
// config.json's rope_theta alone (they read no rope_scaling and have no place for per-frequency
// factors), so a model with scaled RoPE would convert into one that attends with the wrong
// positions. Such a model is refused, exit 1, naming the key or tensor, and nothing is written;
// before, linear scaling vanished without a word and Llama 3.1's rope_freqs.weight was dropped
// with only a warning.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_bump_rope {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

const char* const writers[] = {"bump", "bump[version=4]"};

void expect_refusal(const std::vector<std::string>& args, const cktest::TempDir& dir,
                    const std::string& subject, const std::string& writer) {
    const cktest::RunResult r = cktest::run_ckhost(args);
    BOOST_TEST(r.exit_code == 1, writer << ": " << r.err);
    BOOST_TEST(contains(r.err, subject), writer << ": " << r.err);
    BOOST_TEST(contains(r.err, "rope_theta alone"), writer << ": " << r.err);
    BOOST_TEST(contains(r.err, "nothing was written"), writer << ": " << r.err);
    BOOST_TEST(dir.entries().empty(), writer);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bump_rope_scaling)

BOOST_AUTO_TEST_CASE(linear_scaling_is_refused_naming_the_key) {
    for (const std::string writer : writers) {
        cktest::TempDir dir;
        expect_refusal({"--pipeline",
                        "gguf:meta[set=llama.rope.scaling.type=str:linear]:meta[set=llama.rope."
                        "scaling.factor=f32:4]:headpack:" +
                            writer,
                        "-i", cktest::sample_model().string(), "-o", (dir / "out").string() + "/"},
                       dir, "key 'llama.rope.scaling.factor'", writer);
        // The older key llama.cpp still reads.
        expect_refusal({"--pipeline", "gguf:meta[set=llama.rope.scale_linear=f32:2]:" + writer,
                        "-i", cktest::sample_model().string(), "-o", (dir / "out").string() + "/"},
                       dir, "key 'llama.rope.scale_linear'", writer);
    }
}

BOOST_AUTO_TEST_CASE(a_factor_of_one_scales_nothing_and_converts) {
    cktest::TempDir dir;
    const cktest::RunResult r = cktest::run_ckhost(
        {"--pipeline",
         "gguf:meta[set=llama.rope.scaling.type=str:linear]:meta[set=llama.rope.scaling.factor=f32:"
         "1]:headpack:bump",
         "-i", cktest::sample_model().string(), "-o", (dir / "out").string() + "/"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(fs::exists(dir / "out" / "weights.bump"));
}

// llama.cpp's converter turns Llama 3.1's rope_scaling (rope_type llama3) into rope_freqs.weight.
BOOST_AUTO_TEST_CASE(llama31_rope_freqs_is_refused_naming_the_tensor,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path model = *cktest::shared_data() / "hf-arch" / "llama31-bf16.bf16.gguf";
    for (const std::string writer : writers) {
        cktest::TempDir dir;
        expect_refusal({"--pipeline", "gguf:" + writer, "-i", model.string(), "-o",
                        (dir / "out").string() + "/"},
                       dir, "tensor 'rope_freqs.weight'", writer);
    }
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_bump_rope
