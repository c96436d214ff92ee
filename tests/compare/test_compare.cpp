// `ckhost compare` through the binary: every figure against a float64 NumPy computation over the
// same dequantized values (files in the repository, and the quant and imatrix references of
// ../shared/testdata when present), names matched across formats, tensors on one side only,
// shapes that differ, NaN and infinite values in either file, the same figures on any thread
// count, and the errors.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "compare_helpers.hpp"
#include "test_support.hpp"

namespace unity_test_compare {

using cktest::contains;
using namespace cktest::compare;

namespace {

fs::path arch_quant() {
    return cktest::test_data() / "hf-arch-quant";
}

// Each B against A, and each comparison's figures against NumPy's over the same values.
void check_against_numpy(const fs::path& a, const std::vector<fs::path>& bs,
                         const fs::path& imatrix = {}) {
    cktest::TempDir dir;
    std::vector<std::string> args = {a.string()};
    for (const fs::path& b : bs) args.push_back(b.string());
    if (!imatrix.empty()) args.insert(args.end(), {"--imatrix", imatrix.string()});
    const json doc = compare_json(args);
    BOOST_TEST(doc.at("comparisons").size() == bs.size());
    const fs::path a32 = as_f32(a, dir / "a.gguf");
    for (std::size_t i = 0; i < bs.size(); ++i) {
        BOOST_TEST_CONTEXT(bs[i].filename().string()) {
            const fs::path b32 = as_f32(bs[i], dir / ("b" + std::to_string(i) + ".gguf"));
            expect_numpy_figures(comparison_of(doc, bs[i]), numpy_figures(a32, b32, imatrix));
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compare, *boost::unit_test::precondition(NumpyPresent()))

BOOST_AUTO_TEST_CASE(figures_equal_numpy_on_files_in_the_repository) {
    check_against_numpy(
        arch_quant() / "head72-bf16.gguf",
        {arch_quant() / "head72-bf16.q4_k_m.gguf", arch_quant() / "head72-bf16.q8_0.gguf"});
}

// An importance-matrix quant of the micro model (its F16 made from the example, quantized with
// the repository's matrix of that model): the weighted figures too.
BOOST_AUTO_TEST_CASE(weighted_figures_equal_numpy) {
    cktest::TempDir dir;
    const fs::path imatrix = cktest::test_data() / "imatrix" / "micro-llama-f16.imatrix.gguf";
    const fs::path f16 = dir / "micro-f16.gguf", quant = dir / "micro-iq4_xs.gguf";
    auto r = cktest::run_ckhost({"-q", "--pipeline", "gguf:dequant[to=f16]:gguf", "-i",
                                 cktest::sample_model().string(), "-o", f16.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = cktest::run_ckhost(
        {"quantize", "-q", "--imatrix", imatrix.string(), f16.string(), quant.string(), "IQ4_XS"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_against_numpy(f16, {quant}, imatrix);
    const json doc = compare_json({f16.string(), quant.string(), "--imatrix", imatrix.string()});
    const json& c = doc.at("comparisons").at(0);
    BOOST_TEST(tensor_of(c, "blk.0.ffn_down.weight").at("weighted") == true);
    BOOST_TEST(tensor_of(c, "blk.0.attn_norm.weight").at("weighted") == false);
    BOOST_TEST(c.at("model").at("weighted_snr_db").is_number());
    // The summaries: per layer in number order, per kind in A's order, per B type by name.
    BOOST_TEST(c.at("by_layer").size() == 2u);
    BOOST_TEST(c.at("by_layer").at(1).at("name") == "blk.1");
    BOOST_TEST(c.at("by_layer").at(1).at("tensors") == 9);
    BOOST_TEST(c.at("by_kind").at(0).at("name") == "token_embd.weight");
    BOOST_TEST(c.at("by_kind").at(2).at("name") == "attn_q.weight");
    BOOST_TEST(c.at("by_kind").at(2).at("tensors") == 2);
    std::uint64_t typed = 0;
    for (const json& g : c.at("by_type")) typed += g.at("tensors").get<std::uint64_t>();
    BOOST_TEST(typed == c.at("model").at("tensors").get<std::uint64_t>());
}

BOOST_AUTO_TEST_CASE(figures_equal_numpy_on_the_quant_references,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    const fs::path shared = *cktest::shared_data();
    const fs::path a = shared / "micro-llama-f16.gguf";
    std::vector<fs::path> quants;
    for (const char* name : {"q2_k", "q3_k_m", "q4_0", "q4_k_m", "q5_1", "q6_k", "iq4_nl", "bf16"})
        if (fs::exists(shared / "quant" / ("micro-llama-f16." + std::string(name) + ".gguf")))
            quants.push_back(shared / "quant" / ("micro-llama-f16." + std::string(name) + ".gguf"));
    BOOST_TEST_REQUIRE(quants.size() >= 4u);
    check_against_numpy(a, quants);
    std::vector<fs::path> imatrix_quants;
    for (const char* name : {"iq1_s", "iq2_xxs", "iq3_s", "iq4_xs", "q2_k", "q4_k_m"})
        imatrix_quants.push_back(shared / "imatrix" /
                                 ("micro-llama-f16." + std::string(name) + ".gguf"));
    check_against_numpy(a, imatrix_quants, shared / "imatrix" / "micro-llama-f16.imatrix.gguf");
}

// The same figures whatever the thread count (blocks and their order depend on the data alone)
// and the instruction set (the same additions in the same lanes, no fused multiply-add): on
// tensors of 3 Mi values, several pool items each.
BOOST_AUTO_TEST_CASE(same_figures_on_any_thread_count_and_instruction_set) {
    cktest::TempDir dir;
    std::vector<float> a(3u << 20), b(a.size());
    std::uint32_t state = 12345;
    for (std::size_t i = 0; i < a.size(); ++i) {
        state = state * 1664525u + 1013904223u;
        a[i] = static_cast<float>(state >> 8) * 0x1p-24f - 0.5f;
        b[i] = a[i] + static_cast<float>(state & 0xff) * 0x1p-16f;
    }
    write_safetensors(dir / "a.safetensors", {{"w", {1536, 2048}, a}, {"v", {3u << 20}, b}});
    write_safetensors(dir / "b.safetensors", {{"w", {1536, 2048}, b}, {"v", {3u << 20}, a}});
    const std::vector<std::string> files = {(dir / "a.safetensors").string(),
                                            (dir / "b.safetensors").string()};
    std::vector<std::string> one = files, two = files, scalar = files;
    one.insert(one.end(), {"--threads", "1"});
    two.insert(two.end(), {"--threads", "2"});
    scalar.insert(scalar.end(), {"--isa", "scalar"});
    json x = compare_json(one), y = compare_json(two), z = compare_json(scalar);
    for (json* doc : {&x, &y, &z}) {
        doc->erase("seconds");
        doc->erase("threads");
    }
    BOOST_TEST(x == y);
    BOOST_TEST(x == z);
    BOOST_TEST(x.at("comparisons").at(0).at("model").at("snr_db").is_number());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(compare_names)

// A GGUF against the same tensors as safetensors (gguf:safetensors keeps the names): every
// tensor matched, and identical.
BOOST_AUTO_TEST_CASE(gguf_against_its_safetensors) {
    cktest::TempDir dir;
    const fs::path gguf = arch_quant() / "head72-bf16.gguf", st = dir / "head72.safetensors";
    auto r = cktest::run_ckhost(
        {"-q", "--pipeline", "gguf:safetensors", "-i", gguf.string(), "-o", st.string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = compare_json({gguf.string(), st.string()});
    const json& c = doc.at("comparisons").at(0);
    BOOST_TEST(c.at("b").at("format") == "safetensors");
    BOOST_TEST(c.at("counts").at("compared") == c.at("counts").at("tensors"));
    BOOST_TEST(c.at("counts").at("identical") == c.at("counts").at("tensors"));
    BOOST_TEST(c.at("model").at("identical") == true);
    BOOST_TEST(c.at("model").at("snr_db").is_null());  // +infinity
    const auto text = cktest::run_ckhost({"compare", gguf.string(), st.string()});
    BOOST_TEST(contains(text.out, " inf\n"), text.out);
}

// A Hugging Face checkpoint against the converter's GGUF of it: the hf reader's llama.cpp names
// match every tensor; against the F32 conversion every value is equal.
BOOST_AUTO_TEST_CASE(checkpoint_against_its_gguf,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    const fs::path hf = *cktest::shared_data() / "hf";
    const json doc =
        compare_json({(hf / "llama-bf16").string(), (hf / "llama-bf16.f32.gguf").string(),
                      (hf / "llama-bf16.q8_0.gguf").string()});
    BOOST_TEST(doc.at("a").at("format") == "hf");
    for (const json& c : doc.at("comparisons")) {
        const json& counts = c.at("counts");
        BOOST_TEST(counts.at("compared") == counts.at("tensors"), c.at("b").at("file"));
        BOOST_TEST(counts.at("only_in_a") == 0);
        BOOST_TEST(counts.at("only_in_b") == 0);
    }
    BOOST_TEST(doc.at("comparisons").at(0).at("model").at("identical") == true);
    BOOST_TEST(doc.at("comparisons").at(1).at("model").at("snr_db").get<double>() > 30.0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_compare
