// gguf:gguf reproduces every GGUF that ggml wrote, byte for byte.
#include <boost/test/unit_test.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguf_roundtrip {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;

namespace {

void check_round_trip(const fs::path& in) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", in.string(), "-o", (out / "copy.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, in << ": " << r.err);
    BOOST_TEST(cktest::files_equal(in, out / "copy.gguf"),
               in << " is not reproduced byte for byte");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_round_trip)

BOOST_AUTO_TEST_CASE(committed_files) {
    check_round_trip(cktest::test_data() / "meta" / "metadata.gguf");
    check_round_trip(cktest::test_data() / "bad" / "valid_base.gguf");
    check_round_trip(cktest::examples_dir() / "micro-llama-q4_k_m.gguf");
}

BOOST_AUTO_TEST_CASE(every_shared_gguf, *utf::precondition(cktest::SharedDataPresent())) {
    fs::path root = *cktest::shared_data();
    std::size_t checked = 0;
    for (const auto& dir : {root, root / "types", root / "meta"}) {
        for (const auto& e : fs::directory_iterator(dir)) {
            if (e.path().extension() != ".gguf") continue;
            check_round_trip(e.path());
            ++checked;
        }
    }
    BOOST_TEST(checked >= 10u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_roundtrip
