// dequant[to=f16|bf16] leaves 1-D tensors (norms, biases) in F32, as llama.cpp's converters
// store them, unless only= names them; on real models' tensors.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_dequant_vectors {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

struct Tensor {
    std::string type;
    bool vector = false;  // 1-D
};

// Each tensor of `file` as a copy's plan shows it (`--dry-run`, nothing written): the line
// "  NAME: gguf TYPE SIZE -> gguf", and the JSON plan for the shape.
std::map<std::string, Tensor> tensors_of(const fs::path& file) {
    cktest::TempDir scratch;
    auto r = cktest::run_ckhost({"--dry-run", "-q", "--pipeline", "gguf:gguf", "-i", file.string(),
                                 "-o", (scratch / "x.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::map<std::string, Tensor> tensors;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        const auto colon = line.find(": gguf ");
        if (!line.starts_with("  ") || colon == std::string::npos) continue;
        std::istringstream rest(line.substr(colon + 7));
        Tensor t;
        rest >> t.type;
        tensors[line.substr(2, colon - 2)] = t;
    }
    return tensors;
}

// Names of the 1-D tensors: llama.cpp's norms and biases end in _norm.weight or .bias.
bool one_dimensional(const std::string& name) {
    return name.ends_with("_norm.weight") || name.ends_with(".bias");
}

void check_model(const fs::path& model) {
    const auto before = tensors_of(model);
    std::size_t vectors = 0;
    for (const char* to : {"f16", "bf16"}) {
        cktest::TempDir out;
        auto r = cktest::run_ckhost({"--pipeline", std::string("gguf:dequant[to=") + to + "]:gguf",
                                     "-i", model.string(), "-o", (out / "o.gguf").string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        BOOST_TEST(contains(r.err, "1-D tensor(s) (norms, biases) stay in f32"), r.err);
        const auto after = tensors_of(out / "o.gguf");
        BOOST_TEST_REQUIRE(after.size() == before.size());
        vectors = 0;
        for (const auto& [name, t] : after) {
            if (one_dimensional(name)) {
                ++vectors;
                BOOST_TEST(t.type == "f32", name << " -> " << t.type);
            } else {
                BOOST_TEST(t.type == to, name << " -> " << t.type);
            }
        }
    }
    BOOST_TEST(vectors > 0u);

    // Named by only=, a norm is converted like any other tensor.
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"-q", "--pipeline",
                                 "gguf:dequant[to=f16,only=blk.0.{attn_norm,attn_q}.weight]:gguf",
                                 "-i", model.string(), "-o", (out / "o.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto after = tensors_of(out / "o.gguf");
    BOOST_TEST(after.at("blk.0.attn_norm.weight").type == "f16");
    BOOST_TEST(after.at("blk.0.attn_q.weight").type == "f16");
    BOOST_TEST(after.at("blk.1.attn_norm.weight").type == before.at("blk.1.attn_norm.weight").type);
    // to=f32 (the default) makes everything f32, norms included.
    r = cktest::run_ckhost({"--pipeline", "gguf:dequant:gguf", "-i", model.string(), "-o",
                            (out / "f32.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(!contains(r.err, "stay in f32"), r.err);
    for (const auto& [name, t] : tensors_of(out / "f32.gguf")) BOOST_TEST(t.type == "f32", name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dequant_vectors)

BOOST_AUTO_TEST_CASE(norms_stay_f32_in_the_sample) {
    check_model(cktest::sample_model());
}

BOOST_AUTO_TEST_CASE(norms_stay_f32_in_tiny_llama,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    check_model(*cktest::shared_data() / "tiny-llama-q4_k_m.gguf");
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_dequant_vectors
