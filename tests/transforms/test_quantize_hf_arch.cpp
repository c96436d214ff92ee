// `quantize` on today's architectures: llama.cpp's convert_hf_to_gguf.py outputs in
// ../shared/testdata/hf-arch/ (Llama 3.1, Qwen3, Qwen3-MoE, Mixtral, Gemma 2 and 3, Phi-3,
// Mistral-Nemo) quantized by ckhost and by llama-quantize must give the same file byte for
// byte: expert tensors, fused attn_qkv, Gemma's tied embedding (no output.weight), q/k norms and
// every fallback of a row no block divides. And the Q8_0 fallback: a row that is not a multiple
// of 32 is written F16, as llama-quantize and the converter write it. The references are in
// tests/data/hf-arch-quant/ (its README says how each was made).
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/algorithm/string/case_conv.hpp>

#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_hf_arch {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

fs::path references() {
    return cktest::test_data() / "hf-arch-quant";
}

fs::path hf_arch() {
    return *cktest::shared_data() / "hf-arch";
}

// "f16 8,151936": a tensor's type and shape as digest_gguf.py prints them.
std::string type_and_shape(const ck::TensorInfo& t) {
    std::string shape;
    for (std::int64_t n : t.ne) shape += (shape.empty() ? "" : ",") + std::to_string(n);
    return boost::algorithm::to_lower_copy(std::string(ck::type_name(t.type))) + " " + shape;
}

// Every tensor of `theirs` that `ours` lacks or holds differently (type, shape, data), by name:
// what a failure of the byte comparison lists.
std::vector<std::string> tensor_differences(const fs::path& ours_path,
                                            const fs::path& theirs_path) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader ours(context), theirs(context);
    const ck::ModelHeader a = ours.open(ours_path), b = theirs.open(theirs_path);
    std::map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < a.tensors.size(); ++i) by_name[a.tensors[i].name] = i;
    std::vector<std::string> problems;
    if (a.tensors.size() != b.tensors.size())
        problems.push_back(std::to_string(a.tensors.size()) + " tensors, the reference has " +
                           std::to_string(b.tensors.size()));
    for (std::size_t j = 0; j < b.tensors.size(); ++j) {
        const ck::TensorInfo& t = b.tensors[j];
        const auto it = by_name.find(t.name);
        if (it == by_name.end()) {
            problems.push_back(t.name + ": missing");
            continue;
        }
        const ck::TensorInfo& u = a.tensors[it->second];
        const ck::TensorView x = ours.tensor(it->second), y = theirs.tensor(j);
        if (type_and_shape(u) != type_and_shape(t))
            problems.push_back(t.name + ": ours " + type_and_shape(u) + ", reference " +
                               type_and_shape(t));
        else if (x.size() != y.size() || std::memcmp(x.data(), y.data(), x.size()) != 0)
            problems.push_back(t.name + ": data differs");
    }
    return problems;
}

// Converts `input` with `pipeline` into `out`.
cktest::RunResult convert(const std::string& pipeline, const fs::path& input, const fs::path& out) {
    return cktest::run_ckhost({"--pipeline", pipeline, "-i", input.string(), "-o", out.string()});
}

// `pipeline` on `input` gives `reference` byte for byte; a failure lists the tensors that differ.
void expect_same_file(const std::string& pipeline, const fs::path& input,
                      const fs::path& reference) {
    cktest::TempDir dir;
    const fs::path out = dir / "out.gguf";
    const cktest::RunResult r = convert(pipeline, input, out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    if (cktest::files_equal(out, reference)) return;
    std::string list;
    for (const std::string& p : tensor_differences(out, reference)) list += "\n  " + p;
    BOOST_ERROR(out.filename() << " differs from " << reference << " (tensors:" << list
                               << (list.empty() ? " all equal: metadata or layout)" : ")"));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_hf_arch)

BOOST_AUTO_TEST_CASE(q4_k_m_is_llama_quantize_s_file,
                     *utf::precondition(cktest::SharedDataPresent())) {
    for (const char* model :
         {"llama31", "mixtral", "gemma2", "gemma3", "phi3", "phi3-longrope", "mistral-nemo"}) {
        BOOST_TEST_CONTEXT(model) {
            const std::string stem = std::string(model) + "-bf16";
            expect_same_file("gguf:quantize[mix=q4_k_m]:gguf", hf_arch() / (stem + ".bf16.gguf"),
                             references() / (stem + ".q4_k_m.gguf"));
        }
    }
}

// Qwen3's Q4_K_M files are too large to keep (README.md): llama-quantize's digests are, the
// whole file's and each tensor's in file order, which ckhost's output must have too.
BOOST_AUTO_TEST_CASE(qwen3_q4_k_m_has_llama_quantize_s_digests,
                     *utf::precondition(cktest::SharedDataPresent())) {
    for (const char* model : {"qwen3", "qwen3moe"}) {
        BOOST_TEST_CONTEXT(model) {
            const std::string stem = std::string(model) + "-bf16";
            cktest::TempDir dir;
            const fs::path out = dir / "out.gguf";
            const auto r =
                convert("gguf:quantize[mix=q4_k_m]:gguf", hf_arch() / (stem + ".bf16.gguf"), out);
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            const std::vector<unsigned char> bytes = cktest::read_file(out);
            std::ostringstream ours;
            ours << "file\t" << bytes.size() << "\t"
                 << cktest::sha256_hex(bytes.data(), bytes.size()) << "\n";
            ck::RecordingContext context;
            ckplugin::gguf::GgufReader reader(context);
            const ck::ModelHeader h = reader.open(out);
            for (std::size_t i = 0; i < h.tensors.size(); ++i) {
                const ck::TensorView data = reader.tensor(i);
                std::string ts = type_and_shape(h.tensors[i]);
                ts[ts.find(' ')] = '\t';
                ours << h.tensors[i].name << "\t" << ts << "\t"
                     << cktest::sha256_hex(data.data(), data.size()) << "\n";
            }
            std::ifstream expected(references() / (stem + ".q4_k_m.sha256"));
            std::istringstream mine(ours.str());
            std::string want, got;
            for (int line = 1; std::getline(expected, want); ++line) {
                BOOST_TEST_REQUIRE(static_cast<bool>(std::getline(mine, got)), "line " << line);
                BOOST_TEST(got == want, "line " << line);
            }
            BOOST_TEST(!std::getline(mine, got), "ours has more: " << got);
        }
    }
}

// llama-quantize Q8_0: the 80-wide rows of Mixtral's ffn_down_exps and the 144-wide ones of a
// 2 x 72 attn_output fit no 32-element block, so they are F16, and so is the file.
BOOST_AUTO_TEST_CASE(mix_q8_0_writes_f16_for_rows_no_block_divides) {
    expect_same_file("gguf:quantize[mix=q8_0]:gguf", references() / "head72-bf16.gguf",
                     references() / "head72-bf16.q8_0.gguf");
    expect_same_file("gguf:quantize[mix=q4_k_m]:gguf", references() / "head72-bf16.gguf",
                     references() / "head72-bf16.q4_k_m.gguf");
    if (!cktest::have_shared_data()) return;
    expect_same_file("gguf:quantize[mix=q8_0]:gguf", hf_arch() / "mixtral-bf16.bf16.gguf",
                     references() / "mixtral-bf16.q8_0.gguf");
}

// to=q8_0 is convert_hf_to_gguf.py's --outtype q8_0: the converter's own files byte for byte
// (its order, its keys), F16 where Q8_0 cannot store a row, with a warning naming the tensor.
BOOST_AUTO_TEST_CASE(to_q8_0_is_the_converter_s_q8_0,
                     *utf::precondition(cktest::SharedDataPresent())) {
    for (const char* model : {"mixtral", "gemma3"}) {
        BOOST_TEST_CONTEXT(model) {
            const std::string stem = std::string(model) + "-bf16";
            expect_same_file("gguf:quantize[to=q8_0]:gguf", hf_arch() / (stem + ".bf16.gguf"),
                             hf_arch() / (stem + ".q8_0.gguf"));
        }
    }
    cktest::TempDir dir;
    const auto r = convert("gguf:quantize[to=q8_0]:gguf", hf_arch() / "mixtral-bf16.bf16.gguf",
                           dir / "o.gguf");
    BOOST_TEST(contains(r.err,
                        "warning: tensor 'blk.0.ffn_down_exps.weight': row length 80 is not "
                        "a multiple of 32 (Q8_0) -> F16"),
               r.err);
}

// The 2 x 72 heads: to=q8_0 writes each tensor as llama-quantize's Q8_0 does (attn_output F16),
// in the input's order; general.file_type is still Q8_0's.
BOOST_AUTO_TEST_CASE(to_q8_0_of_72_wide_heads) {
    cktest::TempDir dir;
    const fs::path out = dir / "o.gguf";
    const auto r = convert("gguf:quantize[to=q8_0]:gguf", references() / "head72-bf16.gguf", out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::string list;
    for (const std::string& p : tensor_differences(out, references() / "head72-bf16.q8_0.gguf"))
        list += "\n  " + p;
    BOOST_TEST(list.empty(), "differs from llama-quantize's Q8_0:" << list);
    BOOST_TEST(contains(r.err,
                        "tensor 'blk.1.attn_output.weight': row length 144 is not a multiple "
                        "of 32 (Q8_0) -> F16"),
               r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader h = reader.open(out);
    BOOST_TEST(h.tensors.at(0).name == "token_embd.weight");  // the input's order
    BOOST_TEST(h.metadata.find("general.file_type")->as_uint().value_or(0) == 7u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_quantize_hf_arch
