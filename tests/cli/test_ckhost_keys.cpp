// Writers refuse what they cannot represent: a ckhost.* key says a stage changed what tensor
// bytes mean (headpack's padded heads, repack's u8 codes). gguf:headpack[align=512]:gguf used
// to exit 0 with attn_q as [256, 512] and the head count unchanged (llama.cpp rejects that
// file), and gguf:repack:gguf wrote u8 codes as i8 tensors. Now the host refuses before
// anything is written, naming the key, the stage that set it and the writers that accept it.
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_ckhost_keys {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ckhost_keys)

BOOST_AUTO_TEST_CASE(writers_refuse_keys_they_do_not_understand) {
    struct Case {
        const char* pipeline;
        const char* output;
        const char* key;
        const char* stage;
        const char* writers;
    };
    const Case cases[] = {
        {"gguf:headpack[align=512]:gguf", "o.gguf", "ckhost.headpack.aligned_head_dim",
         "headpack[align=512]", "bump"},
        {"gguf:headpack[align=512]:gguflite", "o.gguflite", "ckhost.headpack.aligned_head_dim",
         "headpack[align=512]", "bump"},
        {"gguf:repack:gguf", "o.gguf", "ckhost.repack.", "repack", "safetensors"},
        {"gguf:repack[to=int8]:gguflite", "o.gguflite", "ckhost.repack.", "repack[to=int8]",
         "safetensors"},
    };
    for (const Case& c : cases) {
        for (bool dry_run : {false, true}) {
            cktest::TempDir out;
            std::vector<std::string> args = {"--pipeline", c.pipeline, "-i",
                                             sample(),     "-o",       (out / c.output).string()};
            if (dry_run) args.push_back("--dry-run");
            auto r = cktest::run_ckhost(args);
            BOOST_TEST(r.exit_code == 1, c.pipeline << ": " << r.err);
            BOOST_TEST(contains(r.err, std::string("key '") + c.key), r.err);
            BOOST_TEST(contains(r.err, std::string("set by stage '") + c.stage + "'"), r.err);
            BOOST_TEST(contains(r.err, std::string("writers that accept it: ") + c.writers), r.err);
            BOOST_TEST(out.entries().empty());
        }
    }
}

BOOST_AUTO_TEST_CASE(writers_that_understand_a_key_accept_it) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--quiet", "--pipeline", "gguf:headpack[align=512]:bump", "-i",
                                 sample(), "-o", (out / "b/").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(fs::exists(out / "b" / "weights.bump"));
    r = cktest::run_ckhost({"--pipeline", "gguf:repack[to=int8]:safetensors", "-i", sample(), "-o",
                            (out / "r.safetensors").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    // headpack with nothing to pad sets no key, so any writer takes its output.
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:headpack:gguf", "-i", sample(), "-o", (out / "same.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(sample(), out / "same.gguf"));
}

// A key can also arrive with the input: a safetensors file of repacked weights carries its
// pairs in __metadata__, which the reader turns back into ckhost.repack.* keys. Converting it
// to GGUF would write the u8 codes as plain i8 tensors; the message says where the key came
// from and names the input file.
BOOST_AUTO_TEST_CASE(keys_read_from_the_input_are_refused_too) {
    cktest::TempDir out;
    const fs::path repacked = out / "r.safetensors";
    auto r = cktest::run_ckhost({"--quiet", "--pipeline", "gguf:repack[to=int8]:safetensors", "-i",
                                 sample(), "-o", repacked.string()});
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    for (const char* pipeline : {"safetensors:gguf", "safetensors:gguflite"}) {
        const fs::path target = out / "back.out";
        r = cktest::run_ckhost(
            {"--pipeline", pipeline, "-i", repacked.string(), "-o", target.string()});
        BOOST_TEST(r.exit_code == 1, pipeline << ": " << r.err);
        BOOST_TEST(contains(r.err, repacked.string() + ": key 'ckhost.repack."), r.err);
        BOOST_TEST(contains(r.err, "read from the input"), r.err);
        BOOST_TEST(contains(r.err, "writers that accept it: safetensors"), r.err);
        BOOST_TEST(!fs::exists(target));
    }
    // The writer that understands the key takes the file back unchanged in meaning.
    r = cktest::run_ckhost({"--pipeline", "safetensors:safetensors", "-i", repacked.string(), "-o",
                            (out / "again.safetensors").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_ckhost_keys
