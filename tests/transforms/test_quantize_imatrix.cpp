// `ckhost quantize --imatrix` against llama-quantize's own files: every output in
// ../shared/testdata/imatrix/ (its README lists how each was made) made again by ckhost from the
// same input with the same flags, compared with cmp's strictness; every refusal listed there,
// with its exit code, its message naming the tensor, and no output left behind.
//
// llama-quantize records its --imatrix argument verbatim (quantize.imatrix.file), and the
// references were made inside the imatrix folder with a bare file name: ckhost runs there too
// (env -C), writing into a temporary folder.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_imatrix {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;

namespace {

struct Case {
    std::string input;               // relative to the shared test data
    std::vector<std::string> flags;  // besides --imatrix
    std::string imatrix;             // in imatrix/
    std::string mix;
    std::string expected;  // llama-quantize's output, in imatrix/
};

std::vector<Case> cases() {
    const std::string llama = "micro-llama-f16.gguf", odd = "quant/micro-odd-f16.gguf";
    const std::string llama_imatrix = "micro-llama-f16.imatrix.gguf";
    std::vector<Case> all;
    for (const char* mix :
         {"IQ1_S",  "IQ1_M",  "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M",  "IQ3_XXS", "IQ3_XS", "IQ3_S",
          "IQ3_M",  "IQ4_XS", "IQ4_NL",  "Q2_K_S", "Q2_K",  "Q3_K_S", "Q3_K_M",  "Q4_K_S", "Q4_K_M",
          "Q5_K_M", "Q6_K",   "Q4_0",    "Q4_1",   "Q5_0",  "Q5_1",   "Q8_0"}) {
        std::string lower = mix;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
        all.push_back({llama, {}, llama_imatrix, mix, "micro-llama-f16." + lower + ".gguf"});
    }
    for (const char* mix : {"IQ2_XXS", "Q2_K_S", "IQ4_XS"}) {
        std::string lower = mix;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
        all.push_back(
            {odd, {}, "micro-odd-f16.imatrix.gguf", mix, "micro-odd-f16." + lower + ".gguf"});
    }
    all.push_back(
        {llama, {}, "micro-llama-f16.imatrix.dat", "IQ2_XXS", "micro-llama-f16.iq2_xxs-dat.gguf"});
    all.push_back({llama,
                   {"--include-weights", "blk.0.", "--include-weights", "attn_v"},
                   llama_imatrix,
                   "Q2_K",
                   "micro-llama-f16.q2_k-include.gguf"});
    all.push_back({llama,
                   {"--exclude-weights", "ffn_up", "--exclude-weights", "blk.1.attn",
                    "--exclude-weights", "output"},
                   llama_imatrix,
                   "IQ3_S",
                   "micro-llama-f16.iq3_s-exclude.gguf"});
    all.push_back({llama,
                   {"--tensor-type", "attn_v=q8_0", "--tensor-type", "ffn_down=q5_k",
                    "--tensor-type", "blk\\.1\\.ffn_up=iq2_xs"},
                   llama_imatrix,
                   "IQ3_XXS",
                   "micro-llama-f16.iq3_xxs-tensor_type.gguf"});
    all.push_back({llama,
                   {"--output-tensor-type", "iq4_xs", "--token-embedding-type", "iq2_s"},
                   llama_imatrix,
                   "IQ1_M",
                   "micro-llama-f16.iq1_m-out_iq4_xs-embd_iq2_s.gguf"});
    all.push_back(
        {llama, {"--pure"}, llama_imatrix, "IQ3_XXS", "micro-llama-f16.iq3_xxs-pure.gguf"});
    all.push_back({llama,
                   {"--prune-layers", "0"},
                   llama_imatrix,
                   "IQ2_XS",
                   "micro-llama-f16.iq2_xs-prune_0.gguf"});
    all.push_back({llama,
                   {"--leave-output-tensor"},
                   llama_imatrix,
                   "IQ1_S",
                   "micro-llama-f16.iq1_s-leave_output.gguf"});
    return all;
}

fs::path imatrix_dir() {
    return *cktest::shared_data() / "imatrix";
}

// `ckhost quantize FLAGS INPUT OUTPUT MIX`, run inside the imatrix folder.
cktest::RunResult quantize_there(const std::vector<std::string>& flags, const fs::path& input,
                                 const fs::path& output, const std::string& mix) {
    std::vector<std::string> args = {"-C", imatrix_dir().string(), cktest::ckhost_binary().string(),
                                     "quantize"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {input.string(), output.string(), mix});
    return cktest::run_program("env", args);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_imatrix)

BOOST_AUTO_TEST_CASE(every_llama_quantize_output_is_made_again_byte_for_byte,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    for (const Case& c : cases()) {
        BOOST_TEST_CONTEXT(c.expected) {
            std::vector<std::string> flags = {"--imatrix", c.imatrix};
            flags.insert(flags.end(), c.flags.begin(), c.flags.end());
            const fs::path out = dir / c.expected;
            const auto r = quantize_there(flags, root / c.input, out, c.mix);
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            BOOST_TEST(cktest::files_equal(out, imatrix_dir() / c.expected),
                       "differs from llama-quantize's file");
        }
    }
}

// Without --imatrix, the mixtures whose tensors need one are refused before any output exists,
// naming the first tensor in llama.cpp's order and its type, as llama-quantize does.
BOOST_AUTO_TEST_CASE(mixtures_that_need_an_imatrix_are_refused_without_one,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path input = *cktest::shared_data() / "micro-llama-f16.gguf";
    cktest::TempDir dir;
    const std::pair<const char*, const char*> refused[] = {
        {"IQ1_S", "IQ1_S"},   {"IQ1_M", "IQ1_M"},    {"IQ2_XXS", "IQ2_XXS"},
        {"IQ2_XS", "IQ2_XS"}, {"IQ2_S", "IQ2_XS"},   {"IQ2_M", "IQ2_S"},
        {"IQ3_XXS", "IQ2_S"}, {"IQ3_XS", "IQ3_XXS"}, {"Q2_K_S", "Q2_K"}};
    for (const auto& [mix, type] : refused) {
        BOOST_TEST_CONTEXT(mix) {
            const fs::path out = dir / "out.gguf";
            const auto r = cktest::run_ckhost({"quantize", input.string(), out.string(), mix});
            BOOST_TEST(r.exit_code == 1);
            BOOST_TEST(cktest::contains(r.err, "blk.0.attn_k.weight"), r.err);
            BOOST_TEST(cktest::contains(r.err, std::string("would be ") + type), r.err);
            BOOST_TEST(cktest::contains(r.err, "needs an importance matrix"), r.err);
            BOOST_TEST(!fs::exists(out));
            BOOST_TEST(fs::is_empty(dir.path()));
        }
    }
    // IQ3_S, IQ3_M and IQ4_XS need none.
    for (const char* mix : {"IQ3_S", "IQ3_M", "IQ4_XS"}) {
        const auto r = cktest::run_ckhost(
            {"quantize", "--force", input.string(), (dir / "ok.gguf").string(), mix});
        BOOST_TEST(r.exit_code == 0, mix << ": " << r.err);
    }
    // micro-odd's rows fit no 256-element type: every tensor falls back to one that needs none.
    const auto odd = cktest::run_ckhost(
        {"quantize", "--force", (*cktest::shared_data() / "quant/micro-odd-f16.gguf").string(),
         (dir / "odd.gguf").string(), "IQ2_XXS"});
    BOOST_TEST(odd.exit_code == 0, odd.err);
}

// What llama-quantize only finds halfway (leaving a partial file, or aborting), refused here
// before a byte is written.
BOOST_AUTO_TEST_CASE(imatrix_that_does_not_fit_is_refused_before_writing,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    struct Refusal {
        std::vector<std::string> flags;
        std::string input, mix;
        std::vector<std::string> said;
    };
    const Refusal refusals[] = {
        {{"--imatrix", "micro-llama-f16.imatrix.gguf", "--pure"},
         "micro-llama-f16.gguf",
         "IQ2_XXS",
         {"token_embd.weight", "no importance matrix entry", "IQ2_XXS"}},
        {{"--imatrix", "micro-llama-f16.imatrix.gguf", "--exclude-weights", "ffn_down"},
         "micro-llama-f16.gguf",
         "IQ2_XXS",
         {"blk.0.ffn_down.weight", "very low-bit"}},
        {{"--imatrix", "micro-llama-f16.imatrix.gguf"},
         "quant/micro-odd-f16.gguf",
         "IQ4_XS",
         {"blk.0.attn_k.weight", "imatrix size 256 is different from tensor size 320"}},
    };
    for (const Refusal& r : refusals) {
        BOOST_TEST_CONTEXT(r.said.front()) {
            const fs::path out = dir / "out.gguf";
            const auto run = quantize_there(r.flags, root / r.input, out, r.mix);
            BOOST_TEST(run.exit_code == 1, run.err);
            for (const std::string& part : r.said)
                BOOST_TEST(cktest::contains(run.err, part), "'" << part << "' not in " << run.err);
            BOOST_TEST(fs::is_empty(dir.path()));
        }
    }
}

// From the repository alone: the sample model (micro-llama, the shapes of tests/data/imatrix's
// matrices) requantized with each form of the matrix gives the same tensors; the keys
// llama-quantize records are there; --dry-run says, per tensor, whether weights were used.
BOOST_AUTO_TEST_CASE(both_forms_give_the_same_tensors_and_the_run_is_recorded) {
    const fs::path data = cktest::test_data() / "imatrix";
    cktest::TempDir dir;
    for (const char* form : {"gguf", "dat"}) {
        const auto r =
            cktest::run_ckhost({"quantize", "--allow-requantize", "--imatrix",
                                (data / (std::string("micro-llama-f16.imatrix.") + form)).string(),
                                cktest::sample_model().string(),
                                (dir / (std::string(form) + ".gguf")).string(), "IQ2_XXS"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    }
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader a(context), b(context);
    const ck::ModelHeader ha = a.open(dir / "gguf.gguf"), hb = b.open(dir / "dat.gguf");
    BOOST_TEST_REQUIRE(ha.tensors.size() == hb.tensors.size());
    for (std::size_t i = 0; i < ha.tensors.size(); ++i) {
        BOOST_TEST(ha.tensors[i].name == hb.tensors[i].name);
        const ck::TensorView va = a.tensor(i), vb = b.tensor(i);
        BOOST_TEST((va.size() == vb.size() && std::memcmp(va.data(), vb.data(), va.size()) == 0),
                   ha.tensors[i].name << " differs between the two forms");
    }
    BOOST_TEST(ha.metadata.find("quantize.imatrix.entries_count")->as_uint().value_or(0) == 15u);
    BOOST_TEST(ha.metadata.find("quantize.imatrix.chunks_count")->as_uint().value_or(0) == 10u);
    BOOST_TEST(ha.metadata.find("quantize.imatrix.dataset")->str() == "gpl-3.txt");
    // The last keys, in llama-quantize's order.
    const auto& entries = ha.metadata.entries();
    BOOST_TEST_REQUIRE(entries.size() >= 4u);
    BOOST_TEST(entries[entries.size() - 4].first == "quantize.imatrix.file");
    BOOST_TEST(entries.back().first == "quantize.imatrix.chunks_count");

    const auto dry = cktest::run_ckhost(
        {"quantize", "--dry-run", "--allow-requantize", "--imatrix",
         (data / "micro-llama-f16.imatrix.gguf").string(), "--exclude-weights", "blk.1.ffn_gate",
         cktest::sample_model().string(), (dir / "dry.gguf").string(), "IQ3_S"});
    BOOST_TEST_REQUIRE(dry.exit_code == 0, dry.err);
    const std::string all = dry.out + dry.err;
    BOOST_TEST(cktest::contains(all, "blk.1.ffn_up.weight"));
    BOOST_TEST(cktest::contains(all,
                                "blk.0.ffn_gate.weight: gguf q4_K 108.0 KiB -> quantize "
                                "iq3_s 82.5 KiB -> gguf  [ffn_gate: IQ3_S (mixture default) "
                                "(requantized from q4_K); importance matrix weights]"),
               all);
    BOOST_TEST(cktest::contains(all,
                                "blk.1.ffn_gate.weight: gguf q4_K 108.0 KiB -> quantize "
                                "iq3_s 82.5 KiB -> gguf  [ffn_gate: IQ3_S (mixture default) "
                                "(requantized from q4_K); no importance matrix entry: "
                                "quantized without weights]"),
               all);
    BOOST_TEST(!fs::exists(dir / "dry.gguf"));
}

// The refusal without a matrix, from the repository alone (the sample's shapes need one for
// IQ2_XXS): exit 1, the tensor and the type named, nothing written.
BOOST_AUTO_TEST_CASE(iq2_xxs_without_a_matrix_is_refused_from_the_sample) {
    cktest::TempDir dir;
    const auto r =
        cktest::run_ckhost({"quantize", "--allow-requantize", cktest::sample_model().string(),
                            (dir / "out.gguf").string(), "IQ2_XXS"});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(cktest::contains(r.err, "tensor 'blk.0.attn_k.weight'"), r.err);
    BOOST_TEST(cktest::contains(r.err, "would be IQ2_XXS, which needs an importance matrix"),
               r.err);
    BOOST_TEST(dir.entries().empty());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_quantize_imatrix
