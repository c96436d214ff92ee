// llama-quantize's mixtures (plugins/quantize/mixture.hpp): the type chosen for every tensor
// equals what llama.cpp's llama-quantize wrote into ../shared/testdata/quant/ and, with an
// importance matrix, ../shared/testdata/imatrix/ (see their README.md), tensor by tensor; and,
// without the shared data, the name lookup, the fallback types, tied embeddings, the per-layer
// counters, the importance-matrix rules, --tensor-type patterns and requires_imatrix on small
// headers built here.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "gguf_reader.hpp"
#include "mixture.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_mixture {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
namespace mq = ckplugin::quantize;
using ck::GgmlType;

namespace {

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

mq::MixSettings settings_for(const std::string& mix) {
    const auto info = mq::find_mix(mix);
    BOOST_TEST_REQUIRE(info.has_value(), "mixture " << mix);
    mq::MixSettings s;
    s.mix = *info;
    return s;
}

// ---- against llama-quantize's outputs -------------------------------------------------------

// One row of quant/README.md's (or imatrix/README.md's) table.
struct QuantCase {
    std::string output;  // in quant/ (imatrix/)
    fs::path input;
    mq::MixSettings settings;
};

std::vector<QuantCase> quant_cases(const fs::path& root) {
    const fs::path quant = root / "quant";
    std::vector<QuantCase> cases;
    for (const char* mix :
         {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S",
          "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ4_NL", "TQ1_0", "TQ2_0", "F16", "BF16"}) {
        cases.push_back({"micro-llama-f16." + lower(mix) + ".gguf", root / "micro-llama-f16.gguf",
                         settings_for(mix)});
    }
    mq::MixSettings pure = settings_for("Q4_K_M");
    pure.pure = true;
    cases.push_back({"micro-llama-f16.q4_k_m-pure.gguf", root / "micro-llama-f16.gguf", pure});
    mq::MixSettings overrides = settings_for("Q4_K_M");
    overrides.output_type = id(GgmlType::q8_0);
    overrides.embd_type = id(GgmlType::q8_0);
    cases.push_back({"micro-llama-f16.q4_k_m-out_q8_0-embd_q8_0.gguf",
                     root / "micro-llama-f16.gguf", overrides});
    cases.push_back(
        {"micro-llama-f32.q4_k_m.gguf", root / "micro-llama-f32.gguf", settings_for("Q4_K_M")});
    cases.push_back({"micro-llama-q8_0.requant.q4_k_m.gguf", root / "micro-llama-q8_0.gguf",
                     settings_for("Q4_K_M")});
    for (const char* mix :
         {"Q4_0", "Q8_0", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_NL", "TQ2_0"}) {
        cases.push_back({"micro-odd-f16." + lower(mix) + ".gguf", quant / "micro-odd-f16.gguf",
                         settings_for(mix)});
    }
    return cases;
}

std::string type_text(std::uint32_t type) {
    return std::string(ck::type_name(type));
}

// Empty when the plan gives every tensor the type llama-quantize gave it and the file type
// matches; otherwise one line per difference (with the rule that chose the type).
std::vector<std::string> compare_with_llama(const QuantCase& c, const fs::path& folder) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader in_reader(context), out_reader(context);
    const ck::ModelHeader in = in_reader.open(c.input);
    const ck::ModelHeader out = out_reader.open(folder / c.output);

    std::vector<std::string> problems;
    std::map<std::string, std::uint32_t> written;  // llama-quantize sorts tensors: use names
    for (const ck::TensorInfo& t : out.tensors) written[t.name] = t.type;
    if (written.size() != in.tensors.size())
        problems.push_back("llama-quantize wrote " + std::to_string(written.size()) +
                           " tensors, the input has " + std::to_string(in.tensors.size()));

    const mq::MixPlan plan = mq::plan_mixture(in, c.settings);
    if (plan.tensors.size() != in.tensors.size()) {
        problems.push_back("the plan has " + std::to_string(plan.tensors.size()) + " entries");
        return problems;
    }
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        const ck::TensorInfo& t = in.tensors[i];
        const mq::TensorChoice& got = plan.tensors[i];
        const auto it = written.find(t.name);
        if (it == written.end()) {
            problems.push_back(t.name + ": not in llama-quantize's output");
            continue;
        }
        if (got.type != it->second) {
            problems.push_back(t.name + ": planned " + type_text(got.type) + ", llama-quantize " +
                               type_text(it->second) + " (rule: " + got.rule + ")");
        }
        if (got.quantized != (got.type != t.type)) {
            problems.push_back(t.name + ": quantized flag " + (got.quantized ? "set" : "clear") +
                               " for " + type_text(t.type) + " -> " + type_text(got.type));
        }
    }
    const ck::Value* ft = out.metadata.find("general.file_type");
    if (!ft || !ft->as_uint()) {
        problems.push_back("the output has no general.file_type");
    } else if (*ft->as_uint() != plan.file_type) {
        problems.push_back("file_type: planned " + std::to_string(plan.file_type) +
                           ", llama-quantize " + std::to_string(*ft->as_uint()));
    }
    return problems;
}

// ---- synthetic headers -----------------------------------------------------------------------

ck::TensorInfo tensor(std::string name, GgmlType type, std::vector<std::int64_t> ne) {
    ck::TensorInfo t;
    t.name = std::move(name);
    t.type = id(type);
    t.ne = std::move(ne);
    return t;
}

ck::ModelHeader llama_header(std::uint32_t layers, std::uint32_t heads, std::uint32_t kv_heads) {
    ck::ModelHeader h;
    h.source = "synthetic.gguf";
    h.format = "gguf";
    h.metadata.set("general.architecture", ck::Value::of_string("llama"));
    h.metadata.set("llama.block_count", ck::Value::of_u32(layers));
    h.metadata.set("llama.attention.head_count", ck::Value::of_u32(heads));
    h.metadata.set("llama.attention.head_count_kv", ck::Value::of_u32(kv_heads));
    return h;
}

const mq::TensorChoice& choice(const ck::ModelHeader& h, const mq::MixPlan& plan,
                               const std::string& name) {
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        if (h.tensors[i].name == name) return plan.tensors.at(i);
    }
    BOOST_FAIL("no tensor " << name);
    return plan.tensors.front();  // not reached
}

// Like micro-odd-f16.gguf, smaller: rows of 320 and 640 (not multiples of 256), one 48-element
// row (not a multiple of 32 either), and no output.weight (the embedding doubles as it).
ck::ModelHeader odd_tied_header() {
    ck::ModelHeader h = llama_header(2, 5, 1);
    h.tensors.push_back(tensor("token_embd.weight", GgmlType::f16, {320, 1000}));
    for (int l = 0; l < 2; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        h.tensors.push_back(tensor(b + "attn_norm.weight", GgmlType::f32, {320}));
        h.tensors.push_back(tensor(b + "attn_q.weight", GgmlType::f16, {320, 320}));
        h.tensors.push_back(tensor(b + "attn_q.bias", GgmlType::f32, {320}));
        h.tensors.push_back(tensor(b + "attn_v.weight", GgmlType::f16, {320, 64}));
        h.tensors.push_back(tensor(b + "ffn_down.weight", GgmlType::f16, {640, 320}));
        h.tensors.push_back(tensor(b + "ffn_up.weight", GgmlType::f16, {48, 64}));
        h.tensors.push_back(tensor(b + "scale.weight", GgmlType::f32, {320, 1}));
    }
    h.tensors.push_back(tensor("output_norm.weight", GgmlType::f32, {320}));
    return h;
}

// Every output in `folder` but `not_compared` has a case, and each case's plan gives every
// tensor llama-quantize's type.
void expect_llama_types(const std::vector<QuantCase>& cases, const fs::path& folder,
                        const std::vector<std::string>& not_compared) {
    std::vector<std::string> unlisted;
    for (const auto& entry : fs::directory_iterator(folder)) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() != ".gguf") continue;
        if (std::find(not_compared.begin(), not_compared.end(), name) != not_compared.end())
            continue;
        const bool listed = std::any_of(cases.begin(), cases.end(),
                                        [&](const QuantCase& c) { return c.output == name; });
        if (!listed) unlisted.push_back(name);
    }
    BOOST_TEST(unlisted.empty(),
               "outputs without settings: " << unlisted.size() << " (first: "
                                            << (unlisted.empty() ? "" : unlisted[0]) << ")");

    std::vector<std::string> matched;
    for (const QuantCase& c : cases) {
        BOOST_TEST_CONTEXT(c.output) {
            BOOST_TEST_REQUIRE(fs::exists(folder / c.output), "missing " << c.output);
            const std::vector<std::string> problems = compare_with_llama(c, folder);
            if (problems.empty()) {
                matched.push_back(c.output);
                continue;
            }
            std::ostringstream s;
            s << problems.size() << " difference(s) from llama-quantize:";
            for (const std::string& p : problems) s << "\n    " << p;
            BOOST_ERROR(s.str());
        }
    }
    BOOST_TEST_MESSAGE("match llama-quantize tensor for tensor: " << matched.size() << " of "
                                                                  << cases.size());
    BOOST_TEST(matched.size() == cases.size());
}

// ---- with an importance matrix ---------------------------------------------------------------

bool imatrix_data_present() {
    return cktest::have_shared_data() &&
           fs::exists(*cktest::shared_data() / "imatrix" / "README.md");
}

struct ImatrixDataPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(imatrix_data_present());
        ok.message() << "../shared/testdata/imatrix is absent: skipping the comparisons with "
                        "llama-quantize --imatrix's outputs";
        return ok;
    }
};

mq::MixSettings with_imatrix(const std::string& mix) {
    mq::MixSettings s = settings_for(mix);
    s.has_imatrix = true;
    return s;
}

// The rows of imatrix/README.md's table whose types plan_mixture decides alone.
std::vector<QuantCase> imatrix_cases(const fs::path& root) {
    const fs::path llama = root / "micro-llama-f16.gguf";
    const fs::path odd = root / "quant" / "micro-odd-f16.gguf";
    std::vector<QuantCase> cases;
    for (const char* mix :
         {"IQ1_S",  "IQ1_M",  "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M",  "IQ3_XXS", "IQ3_XS", "IQ3_S",
          "IQ3_M",  "IQ4_XS", "IQ4_NL",  "Q2_K_S", "Q2_K",  "Q3_K_S", "Q3_K_M",  "Q4_K_S", "Q4_K_M",
          "Q5_K_M", "Q6_K",   "Q4_0",    "Q4_1",   "Q5_0",  "Q5_1",   "Q8_0"})
        cases.push_back({"micro-llama-f16." + lower(mix) + ".gguf", llama, with_imatrix(mix)});
    for (const char* mix : {"IQ2_XXS", "Q2_K_S", "IQ4_XS"})
        cases.push_back({"micro-odd-f16." + lower(mix) + ".gguf", odd, with_imatrix(mix)});
    // The legacy .dat matrix: the same choice.
    cases.push_back({"micro-llama-f16.iq2_xxs-dat.gguf", llama, with_imatrix("IQ2_XXS")});

    mq::MixSettings tensor_types = with_imatrix("IQ3_XXS");
    tensor_types.tensor_types = {{"attn_v", id(GgmlType::q8_0)},
                                 {"ffn_down", id(GgmlType::q5_k)},
                                 {"blk\\.1\\.ffn_up", id(GgmlType::iq2_xs)}};
    cases.push_back({"micro-llama-f16.iq3_xxs-tensor_type.gguf", llama, tensor_types});
    mq::MixSettings overrides = with_imatrix("IQ1_M");
    overrides.output_type = id(GgmlType::iq4_xs);
    overrides.embd_type = id(GgmlType::iq2_s);
    cases.push_back({"micro-llama-f16.iq1_m-out_iq4_xs-embd_iq2_s.gguf", llama, overrides});
    mq::MixSettings pure = with_imatrix("IQ3_XXS");
    pure.pure = true;
    cases.push_back({"micro-llama-f16.iq3_xxs-pure.gguf", llama, pure});
    mq::MixSettings leave = with_imatrix("IQ1_S");
    leave.leave_output = true;
    cases.push_back({"micro-llama-f16.iq1_s-leave_output.gguf", llama, leave});
    return cases;
}

// imatrix/'s files that are no case: the matrices, and the outputs whose difference lies in
// what the quantize transform does around the plan (pruned layers; the matrix's
// --include-weights/--exclude-weights, which change data, not types).
const std::vector<std::string> imatrix_not_compared = {
    "micro-llama-f16.imatrix.gguf", "micro-odd-f16.imatrix.gguf",
    "micro-llama-f16.iq2_xs-prune_0.gguf", "micro-llama-f16.q2_k-include.gguf",
    "micro-llama-f16.iq3_s-exclude.gguf"};

// A llama of `layers` layers with every role the rules look at, all rows of 256 (no fallback).
ck::ModelHeader roles_header(std::uint32_t layers, std::uint32_t heads, std::uint32_t kv_heads) {
    ck::ModelHeader h = llama_header(layers, heads, kv_heads);
    h.tensors.push_back(tensor("token_embd.weight", GgmlType::f16, {256, 1000}));
    h.tensors.push_back(tensor("output.weight", GgmlType::f16, {256, 1000}));
    for (std::uint32_t l = 0; l < layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        h.tensors.push_back(tensor(b + "attn_norm.weight", GgmlType::f32, {256}));
        for (const char* role :
             {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"})
            h.tensors.push_back(tensor(b + role + ".weight", GgmlType::f16, {256, 256}));
    }
    return h;
}

// "blk.3.ffn_down.weight"
std::string weight(int layer, const std::string& role) {
    return "blk." + std::to_string(layer) + "." + role + ".weight";
}

std::uint32_t type_of(const ck::ModelHeader& h, const mq::MixPlan& plan, const std::string& name) {
    return choice(h, plan, name).type;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_mixture)

BOOST_AUTO_TEST_CASE(names_are_case_insensitive) {
    for (const char* name : {"q4_k_m", "Q4_K_M", "q4_K_m", "Q4_k_M"}) {
        const auto m = mq::find_mix(name);
        BOOST_TEST_REQUIRE(m.has_value(), name);
        BOOST_TEST(m->name == "Q4_K_M");
        BOOST_TEST(m->default_type == id(GgmlType::q4_k));
        BOOST_TEST(m->file_type == 15u);
    }
    // llama-quantize's aliases give the full mixture.
    BOOST_TEST(mq::find_mix("q4_k")->name == "Q4_K_M");
    BOOST_TEST(mq::find_mix("Q5_K")->name == "Q5_K_M");
    BOOST_TEST(mq::find_mix("q3_k")->name == "Q3_K_M");

    struct Expected {
        const char* name;
        GgmlType type;
        std::uint32_t file_type;
    };
    for (const Expected& e : {Expected{"q4_0", GgmlType::q4_0, 2},
                              {"q4_1", GgmlType::q4_1, 3},
                              {"q5_0", GgmlType::q5_0, 8},
                              {"q5_1", GgmlType::q5_1, 9},
                              {"q8_0", GgmlType::q8_0, 7},
                              {"q2_k", GgmlType::q2_k, 10},
                              {"q3_k_s", GgmlType::q3_k, 11},
                              {"q3_k_m", GgmlType::q3_k, 12},
                              {"q3_k_l", GgmlType::q3_k, 13},
                              {"q4_k_s", GgmlType::q4_k, 14},
                              {"q5_k_s", GgmlType::q5_k, 16},
                              {"q5_k_m", GgmlType::q5_k, 17},
                              {"q6_k", GgmlType::q6_k, 18},
                              {"iq4_nl", GgmlType::iq4_nl, 25},
                              {"iq2_xxs", GgmlType::iq2_xxs, 19},
                              {"iq2_xs", GgmlType::iq2_xs, 20},
                              {"q2_k_s", GgmlType::q2_k, 21},
                              {"iq3_xs", GgmlType::iq3_s, 22},
                              {"iq3_xxs", GgmlType::iq3_xxs, 23},
                              {"iq1_s", GgmlType::iq1_s, 24},
                              {"iq3_s", GgmlType::iq3_s, 26},
                              {"iq3_m", GgmlType::iq3_s, 27},
                              {"iq2_s", GgmlType::iq2_xs, 28},
                              {"iq2_m", GgmlType::iq2_s, 29},
                              {"iq4_xs", GgmlType::iq4_xs, 30},
                              {"iq1_m", GgmlType::iq1_m, 31},
                              {"tq1_0", GgmlType::tq1_0, 36},
                              {"tq2_0", GgmlType::tq2_0, 37},
                              {"f16", GgmlType::f16, 1},
                              {"bf16", GgmlType::bf16, 32},
                              {"f32", GgmlType::f32, 0}}) {
        const auto m = mq::find_mix(e.name);
        BOOST_TEST_REQUIRE(m.has_value(), e.name);
        BOOST_TEST(m->default_type == id(e.type), e.name);
        BOOST_TEST(m->file_type == e.file_type, e.name);
    }
}

BOOST_AUTO_TEST_CASE(unknown_names_are_refused) {
    // Q1_0, Q2_0, MXFP4_MOE and COPY are llama-quantize's too, but not made here.
    for (const char* name : {"", "q4", "q4_k_x", "Q4_K_M ", " q4_k_m", "q2_k_m", "iq2_xxs_s",
                             "iq3_l", "q1_0", "q2_0", "mxfp4_moe", "copy", "15", "q4_k_m_s"}) {
        BOOST_TEST(!mq::find_mix(name).has_value(), "'" << name << "'");
    }
}

BOOST_AUTO_TEST_CASE(every_listed_name_is_found) {
    const std::vector<std::string> names = mq::mix_names();
    // llama-quantize's QUANT_OPTIONS order, without its aliases and the types not made here.
    const std::vector<std::string> listed = {
        "Q4_0",   "Q4_1",   "Q5_0",   "Q5_1",   "IQ2_XXS", "IQ2_XS", "IQ2_S",   "IQ2_M",
        "IQ1_S",  "IQ1_M",  "TQ1_0",  "TQ2_0",  "Q2_K",    "Q2_K_S", "IQ3_XXS", "IQ3_S",
        "IQ3_M",  "IQ3_XS", "Q3_K_S", "Q3_K_M", "Q3_K_L",  "IQ4_NL", "IQ4_XS",  "Q4_K_S",
        "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",   "Q8_0",    "F16",    "BF16",    "F32"};
    BOOST_TEST(names == listed, boost::test_tools::per_element());
    for (const std::string& n : names) {
        const auto m = mq::find_mix(lower(n));
        BOOST_TEST_REQUIRE(m.has_value(), n);
        BOOST_TEST(m->name == n);
    }
}

// Rows that no K-quant block divides fall back to a 32-element type, and to F16 when even 32
// does not divide them; the tied embedding is treated as the output (Q8_0, since its row is
// not a multiple of 256); 1-D tensors, biases and [n, 1] tensors are copied.
BOOST_AUTO_TEST_CASE(fallbacks_and_tied_embeddings) {
    const ck::ModelHeader h = odd_tied_header();
    const mq::MixPlan plan = mq::plan_mixture(h, settings_for("Q4_K_M"));
    BOOST_TEST(plan.file_type == 15u);
    BOOST_TEST_REQUIRE(plan.tensors.size() == h.tensors.size());

    const auto& embd = choice(h, plan, "token_embd.weight");
    BOOST_TEST(embd.type == id(GgmlType::q8_0));
    BOOST_TEST(embd.quantized);
    BOOST_TEST(cktest::contains(embd.rule, "tied"), embd.rule);

    for (const char* name : {"blk.0.attn_norm.weight", "blk.0.attn_q.bias", "blk.1.scale.weight",
                             "output_norm.weight"}) {
        const auto& c = choice(h, plan, name);
        BOOST_TEST(c.type == id(GgmlType::f32), name);
        BOOST_TEST(!c.quantized, name);
    }
    BOOST_TEST(choice(h, plan, "blk.0.attn_norm.weight").rule == "1-D tensor: copied");
    BOOST_TEST(choice(h, plan, "blk.0.attn_q.bias").rule == "1-D tensor: copied");

    // Q4_K -> Q5_0; use_more_bits' Q6_K (layer 1 of 2) -> Q8_0.
    BOOST_TEST(choice(h, plan, "blk.0.attn_q.weight").type == id(GgmlType::q5_0));
    BOOST_TEST(choice(h, plan, "blk.0.attn_v.weight").type == id(GgmlType::q5_0));
    const auto& v1 = choice(h, plan, "blk.1.attn_v.weight");
    BOOST_TEST(v1.type == id(GgmlType::q8_0));
    BOOST_TEST(cktest::contains(v1.rule, "use_more_bits"), v1.rule);
    BOOST_TEST(cktest::contains(v1.rule, "-> Q8_0"), v1.rule);
    BOOST_TEST(choice(h, plan, "blk.0.ffn_down.weight").type == id(GgmlType::q5_0));
    BOOST_TEST(choice(h, plan, "blk.1.ffn_down.weight").type == id(GgmlType::q8_0));
    // 48 is not a multiple of 256 (Q4_K) nor of 32 (Q5_0): F16, which here is a copy.
    const auto& up = choice(h, plan, "blk.0.ffn_up.weight");
    BOOST_TEST(up.type == id(GgmlType::f16));
    BOOST_TEST(!up.quantized);
    BOOST_TEST(cktest::contains(up.rule, "-> F16"), up.rule);

    // Q2_K: Q3_K and Q2_K fall back to Q4_0; attn_v gets Q4_K (n_gqa 5 >= 4) -> Q5_0.
    const mq::MixPlan q2 = mq::plan_mixture(h, settings_for("Q2_K"));
    BOOST_TEST(choice(h, q2, "token_embd.weight").type == id(GgmlType::q8_0));
    BOOST_TEST(choice(h, q2, "blk.0.attn_q.weight").type == id(GgmlType::q4_0));
    BOOST_TEST(choice(h, q2, "blk.0.ffn_down.weight").type == id(GgmlType::q4_0));
    BOOST_TEST(choice(h, q2, "blk.1.attn_v.weight").type == id(GgmlType::q5_0));
    BOOST_TEST(cktest::contains(choice(h, q2, "blk.1.attn_v.weight").rule, "n_gqa 5"));

    // --pure still falls back. A 32-element type that does not divide a row has no smaller
    // block to fall back to: F16, as llama.cpp's tensor_type_fallback (late 2025) writes it
    // (llama-quantize Q8_0 writes mixtral-bf16's 80-wide ffn_down_exps F16:
    // tests/transforms/test_quantize_hf_arch.cpp).
    mq::MixSettings pure = settings_for("Q4_K_M");
    pure.pure = true;
    const mq::MixPlan p = mq::plan_mixture(h, pure);
    BOOST_TEST(choice(h, p, "token_embd.weight").type == id(GgmlType::q5_0));
    BOOST_TEST(choice(h, p, "blk.1.attn_v.weight").type == id(GgmlType::q5_0));
    for (const char* mix : {"Q4_0", "Q8_0", "IQ4_NL"}) {
        const mq::MixPlan legacy_plan =
            mq::plan_mixture(h, settings_for(mix));  // outlives `legacy`
        const auto& legacy = choice(h, legacy_plan, "blk.0.ffn_up.weight");
        BOOST_TEST(legacy.type == id(GgmlType::f16), mix);
        BOOST_TEST(cktest::contains(legacy.rule, "row length 48 is not a multiple of 32"),
                   legacy.rule);
        BOOST_TEST(cktest::contains(legacy.rule, "-> F16"), legacy.rule);
    }
}

// tensor_type_fallback on its own: each type's replacement, F16 when that does not fit either,
// the type itself when its block divides the row, and no answer for a type without a rule.
BOOST_AUTO_TEST_CASE(fallback_types) {
    struct Row {
        GgmlType type;
        std::int64_t length;
        GgmlType expected;
    };
    for (const Row& r :
         {Row{GgmlType::q4_k, 64, GgmlType::q5_0}, Row{GgmlType::q4_k, 80, GgmlType::f16},
          Row{GgmlType::q6_k, 96, GgmlType::q8_0}, Row{GgmlType::q5_k, 160, GgmlType::q5_1},
          Row{GgmlType::q2_k, 32, GgmlType::q4_0}, Row{GgmlType::tq2_0, 64, GgmlType::q4_0},
          Row{GgmlType::q8_0, 144, GgmlType::f16}, Row{GgmlType::q8_0, 128, GgmlType::q8_0},
          Row{GgmlType::q4_0, 80, GgmlType::f16}, Row{GgmlType::iq4_nl, 48, GgmlType::f16},
          Row{GgmlType::f16, 7, GgmlType::f16}, Row{GgmlType::q4_k, 512, GgmlType::q4_k}})
        BOOST_TEST(mq::fallback_type(id(r.type), r.length).value_or(~0u) == id(r.expected),
                   ck::type_name(id(r.type)) << " rows of " << r.length);
    BOOST_TEST(mq::fallback_reason(id(GgmlType::q4_k), 80, id(GgmlType::f16)) ==
               "row length 80 is not a multiple of 256 (Q4_K) nor of 32 (Q5_0) -> F16");
    BOOST_TEST(mq::fallback_reason(id(GgmlType::q8_0), 144, id(GgmlType::f16)) ==
               "row length 144 is not a multiple of 32 (Q8_0) -> F16");
    // Q8_K (256-element blocks, never a file type's weight) has no replacement in llama.cpp.
    BOOST_TEST(!mq::fallback_type(id(GgmlType::q8_k), 64).has_value());
}

// With --output-tensor-type and no output.weight, the tied embedding takes that type;
// --token-embedding-type wins over it.
BOOST_AUTO_TEST_CASE(tied_embeddings_and_overrides) {
    const ck::ModelHeader h = odd_tied_header();
    mq::MixSettings s = settings_for("Q4_K_M");
    s.output_type = id(GgmlType::q4_0);
    BOOST_TEST(choice(h, mq::plan_mixture(h, s), "token_embd.weight").type == id(GgmlType::q4_0));
    s.embd_type = id(GgmlType::q5_1);
    BOOST_TEST(choice(h, mq::plan_mixture(h, s), "token_embd.weight").type == id(GgmlType::q5_1));
    // An override type whose block does not divide the row is refused, naming the tensor.
    s.embd_type = id(GgmlType::q6_k);
    BOOST_CHECK_EXCEPTION(mq::plan_mixture(h, s), ck::Error, [](const ck::Error& e) {
        return e.subject() == "tensor 'token_embd.weight'";
    });

    // With an output.weight the embedding is not tied: the mixture's type, and Q6_K for the
    // output.
    ck::ModelHeader untied = llama_header(2, 4, 4);
    untied.tensors.push_back(tensor("output.weight", GgmlType::f16, {256, 1000}));
    untied.tensors.push_back(tensor("token_embd.weight", GgmlType::f16, {256, 1000}));
    const mq::MixPlan plan = mq::plan_mixture(untied, settings_for("Q4_K_M"));
    BOOST_TEST(choice(untied, plan, "output.weight").type == id(GgmlType::q6_k));
    BOOST_TEST(choice(untied, plan, "token_embd.weight").type == id(GgmlType::q4_k));
    mq::MixSettings leave = settings_for("Q4_K_M");
    leave.leave_output = true;
    const mq::MixPlan left = mq::plan_mixture(untied, leave);
    const auto& out = choice(untied, left, "output.weight");
    BOOST_TEST(out.type == id(GgmlType::f16));
    BOOST_TEST(!out.quantized);
    // Ternary mixtures keep the embedding at Q4_K.
    BOOST_TEST(
        choice(untied, mq::plan_mixture(untied, settings_for("TQ2_0")), "token_embd.weight").type ==
        id(GgmlType::q4_k));
}

// The per-layer counters follow llama.cpp's visiting order (layer number, then name), not the
// file's order nor plain name order (where blk.10 comes before blk.2).
BOOST_AUTO_TEST_CASE(use_more_bits_counts_layers_in_order) {
    ck::ModelHeader h = llama_header(12, 8, 8);
    for (int l : {11, 2, 10, 0, 5, 1, 3, 4, 6, 7, 8, 9}) {
        const std::string b = "blk." + std::to_string(l) + ".";
        h.tensors.push_back(tensor(b + "attn_v.weight", GgmlType::f16, {256, 256}));
        h.tensors.push_back(tensor(b + "ffn_down.weight", GgmlType::f16, {256, 256}));
    }
    h.tensors.push_back(tensor("output.weight", GgmlType::f16, {256, 100}));
    const mq::MixPlan plan = mq::plan_mixture(h, settings_for("Q4_K_M"));
    // use_more_bits(i, 12): i < 1, i >= 10, or (i - 1) % 3 == 2.
    for (int l = 0; l < 12; ++l) {
        const bool more = l == 0 || l == 3 || l == 6 || l == 9 || l == 10 || l == 11;
        const std::uint32_t want = more ? id(GgmlType::q6_k) : id(GgmlType::q4_k);
        const std::string b = "blk." + std::to_string(l) + ".";
        BOOST_TEST(choice(h, plan, b + "attn_v.weight").type == want, b);
        BOOST_TEST(choice(h, plan, b + "ffn_down.weight").type == want, b);
    }
    // Q3_K_M: the first two attn_v by layer get Q5_K.
    const mq::MixPlan q3 = mq::plan_mixture(h, settings_for("Q3_K_M"));
    for (int l = 0; l < 12; ++l) {
        const std::string name = "blk." + std::to_string(l) + ".attn_v.weight";
        BOOST_TEST(choice(h, q3, name).type == (l < 2 ? id(GgmlType::q5_k) : id(GgmlType::q4_k)),
                   name);
    }
}

// An 8-expert model bumps attn_v and attn_k to Q8_0; expert tensors take their layer from the
// name, and a name without one cannot be placed.
BOOST_AUTO_TEST_CASE(experts) {
    ck::ModelHeader h = llama_header(2, 8, 8);
    h.metadata.set("llama.expert_count", ck::Value::of_u32(8));
    h.tensors.push_back(tensor("output.weight", GgmlType::f16, {256, 100}));
    h.tensors.push_back(tensor("blk.0.attn_v.weight", GgmlType::f16, {256, 256}));
    h.tensors.push_back(tensor("blk.0.attn_k.weight", GgmlType::f16, {256, 256}));
    h.tensors.push_back(tensor("blk.1.ffn_down_exps.weight", GgmlType::f16, {256, 256, 8}));
    h.tensors.push_back(tensor("blk.1.ffn_gate_inp.weight", GgmlType::f32, {256, 8}));
    const mq::MixPlan plan = mq::plan_mixture(h, settings_for("Q4_K_M"));
    BOOST_TEST(choice(h, plan, "blk.0.attn_v.weight").type == id(GgmlType::q8_0));
    BOOST_TEST(choice(h, plan, "blk.0.attn_k.weight").type == id(GgmlType::q8_0));
    // Layer 1 of 2 (from the name): use_more_bits.
    BOOST_TEST(choice(h, plan, "blk.1.ffn_down_exps.weight").type == id(GgmlType::q6_k));
    BOOST_TEST(!choice(h, plan, "blk.1.ffn_gate_inp.weight").quantized);

    h.tensors.push_back(tensor("shared.ffn_down.weight", GgmlType::f16, {256, 256}));
    BOOST_CHECK_EXCEPTION(
        mq::plan_mixture(h, settings_for("Q4_K_M")), ck::Error,
        [](const ck::Error& e) { return e.subject() == "tensor 'shared.ffn_down.weight'"; });
}

// A requantized input: the types do not depend on the input's type; a tensor already of the
// chosen type is copied.
BOOST_AUTO_TEST_CASE(requantizing) {
    ck::ModelHeader h = llama_header(2, 4, 2);
    h.tensors.push_back(tensor("output.weight", GgmlType::q8_0, {256, 100}));
    h.tensors.push_back(tensor("token_embd.weight", GgmlType::q8_0, {256, 100}));
    h.tensors.push_back(tensor("blk.0.attn_q.weight", GgmlType::q8_0, {256, 256}));
    const mq::MixPlan km = mq::plan_mixture(h, settings_for("Q4_K_M"));
    BOOST_TEST(choice(h, km, "output.weight").type == id(GgmlType::q6_k));
    BOOST_TEST(choice(h, km, "blk.0.attn_q.weight").type == id(GgmlType::q4_k));
    BOOST_TEST(choice(h, km, "blk.0.attn_q.weight").quantized);
    const mq::MixPlan q8 = mq::plan_mixture(h, settings_for("Q8_0"));
    for (const auto& c : q8.tensors) {
        BOOST_TEST(c.type == id(GgmlType::q8_0));
        BOOST_TEST(!c.quantized, c.rule);
    }
}

// What cannot be decided is an error naming the key; the float mixtures need no model facts.
BOOST_AUTO_TEST_CASE(missing_facts) {
    ck::ModelHeader h = odd_tied_header();
    h.metadata.erase("llama.block_count");
    BOOST_CHECK_EXCEPTION(
        mq::plan_mixture(h, settings_for("Q4_K_M")), ck::Error,
        [](const ck::Error& e) { return e.subject() == "key 'llama.block_count'"; });
    const mq::MixPlan f16 = mq::plan_mixture(h, settings_for("F16"));
    BOOST_TEST(f16.file_type == 1u);
    BOOST_TEST(choice(h, f16, "blk.0.attn_q.weight").type == id(GgmlType::f16));
    BOOST_TEST(!choice(h, f16, "blk.0.attn_q.weight").quantized);
    const mq::MixPlan f32 = mq::plan_mixture(h, settings_for("F32"));
    BOOST_TEST(f32.file_type == 0u);
    BOOST_TEST(choice(h, f32, "blk.0.attn_q.weight").type == id(GgmlType::f32));
    BOOST_TEST(choice(h, f32, "blk.0.attn_q.weight").quantized);

    ck::ModelHeader no_heads = odd_tied_header();
    no_heads.metadata.erase("llama.attention.head_count");
    no_heads.metadata.erase("llama.attention.head_count_kv");
    // Q4_K_M never looks at the head counts; Q2_K's attn_v rule does.
    BOOST_CHECK_NO_THROW(mq::plan_mixture(no_heads, settings_for("Q4_K_M")));
    BOOST_CHECK_EXCEPTION(
        mq::plan_mixture(no_heads, settings_for("Q2_K")), ck::Error,
        [](const ck::Error& e) { return e.subject() == "key 'llama.attention.head_count'"; });

    ck::ModelHeader no_arch = odd_tied_header();
    no_arch.metadata.erase("general.architecture");
    BOOST_CHECK_EXCEPTION(
        mq::plan_mixture(no_arch, settings_for("Q4_K_M")), ck::Error,
        [](const ck::Error& e) { return e.subject() == "key 'general.architecture'"; });
}

// The rules an importance matrix changes, on 16 layers (n_layer/8 = 2: the 2-layer files in
// ../shared/testdata/imatrix/ cannot show the first-eighth rules).
BOOST_AUTO_TEST_CASE(importance_matrix_rules) {
    const ck::ModelHeader h = roles_header(16, 8, 8);
    struct Row {
        const char* mix;
        bool imatrix;
        GgmlType first_eighth;  // ffn_down of layers 0 and 1
        GgmlType later;         // ffn_down of layers 2 to 15
    };
    for (const Row& r : {Row{"IQ4_XS", false, GgmlType::q5_k, GgmlType::iq4_xs},
                         Row{"IQ4_XS", true, GgmlType::iq4_xs, GgmlType::iq4_xs},
                         Row{"IQ4_NL", false, GgmlType::q5_k, GgmlType::iq4_nl},
                         Row{"IQ4_NL", true, GgmlType::iq4_nl, GgmlType::iq4_nl},
                         Row{"Q4_0", false, GgmlType::q4_0, GgmlType::q4_0},
                         Row{"Q4_0", true, GgmlType::q4_1, GgmlType::q4_0},
                         Row{"Q5_0", false, GgmlType::q5_0, GgmlType::q5_0},
                         Row{"Q5_0", true, GgmlType::q5_1, GgmlType::q5_0},
                         Row{"IQ3_XXS", false, GgmlType::q4_k, GgmlType::q3_k},
                         Row{"IQ3_XXS", true, GgmlType::iq3_xxs, GgmlType::iq3_xxs},
                         // No importance matrix rule: only the first eighth changes.
                         Row{"Q2_K_S", true, GgmlType::q4_k, GgmlType::q2_k},
                         Row{"IQ3_M", true, GgmlType::q4_k, GgmlType::iq3_s},
                         Row{"IQ2_XXS", true, GgmlType::q2_k, GgmlType::iq2_xxs},
                         Row{"IQ2_XS", true, GgmlType::q2_k, GgmlType::iq2_xs},
                         Row{"IQ1_S", true, GgmlType::q2_k, GgmlType::iq1_s},
                         Row{"IQ2_M", true, GgmlType::iq3_s, GgmlType::iq2_s}}) {
        mq::MixSettings s = settings_for(r.mix);
        s.has_imatrix = r.imatrix;
        const mq::MixPlan plan = mq::plan_mixture(h, s);
        for (int l = 0; l < 16; ++l) {
            const std::uint32_t want = id(l < 2 ? r.first_eighth : r.later);
            BOOST_TEST(type_of(h, plan, weight(l, "ffn_down")) == want,
                       r.mix << (r.imatrix ? " with" : " without") << " imatrix, layer " << l);
        }
    }
    // IQ3_XXS's attn_v (n_gqa 1): IQ3_XXS itself only with an importance matrix.
    mq::MixSettings iq3 = settings_for("IQ3_XXS");
    BOOST_TEST(type_of(h, mq::plan_mixture(h, iq3), weight(5, "attn_v")) == id(GgmlType::iq3_s));
    iq3.has_imatrix = true;
    const mq::MixPlan with = mq::plan_mixture(h, iq3);  // outlives `v`
    const auto& v = choice(h, with, weight(5, "attn_v"));
    BOOST_TEST(v.type == id(GgmlType::iq3_xxs));
    BOOST_TEST(cktest::contains(v.rule, "importance matrix"), v.rule);
    // The Q4_1 rule says why.
    const mq::MixPlan q4 = mq::plan_mixture(h, with_imatrix("Q4_0"));
    BOOST_TEST(cktest::contains(choice(h, q4, weight(1, "ffn_down")).rule, "layer 1 of 16"));
}

// The other roles of the IQ mixtures on the same 16 layers (n_gqa 1, no experts).
BOOST_AUTO_TEST_CASE(iq_mixture_roles) {
    const ck::ModelHeader h = roles_header(16, 8, 8);
    struct Row {
        const char* mix;
        std::string tensor;
        GgmlType type;
    };
    for (const Row& r : {Row{"IQ2_XXS", "token_embd.weight", GgmlType::q2_k},
                         Row{"IQ2_XXS", "output.weight", GgmlType::q5_k},
                         Row{"IQ2_XXS", weight(3, "attn_v"), GgmlType::q2_k},
                         Row{"IQ2_XXS", weight(3, "attn_output"), GgmlType::iq2_xxs},
                         Row{"IQ2_S", "token_embd.weight", GgmlType::iq3_s},
                         Row{"IQ2_S", weight(3, "attn_v"), GgmlType::iq3_s},
                         Row{"IQ2_S", weight(3, "attn_output"), GgmlType::iq3_s},
                         Row{"IQ2_S", weight(3, "attn_q"), GgmlType::iq2_xs},
                         Row{"IQ1_M", weight(3, "attn_output"), GgmlType::iq2_xxs},
                         Row{"IQ1_M", "output.weight", GgmlType::q5_k},
                         Row{"IQ3_XXS", "token_embd.weight", GgmlType::iq3_s},
                         Row{"IQ3_XXS", "output.weight", GgmlType::q5_k},
                         Row{"IQ3_XXS", weight(3, "attn_q"), GgmlType::iq2_s},
                         Row{"IQ3_XXS", weight(3, "attn_k"), GgmlType::iq2_s},
                         Row{"IQ3_XXS", weight(3, "attn_output"), GgmlType::iq3_s},
                         Row{"IQ3_XS", "output.weight", GgmlType::q6_k},
                         Row{"IQ3_XS", weight(3, "attn_q"), GgmlType::iq3_xxs},
                         Row{"IQ3_XS", weight(3, "attn_k"), GgmlType::iq3_xxs},
                         Row{"IQ3_XS", weight(3, "attn_v"), GgmlType::iq3_s},
                         Row{"IQ3_M", weight(3, "attn_v"), GgmlType::q4_k},
                         Row{"IQ3_M", weight(3, "attn_output"), GgmlType::q4_k},
                         Row{"IQ3_S", weight(3, "attn_v"), GgmlType::iq3_s},
                         Row{"IQ4_XS", "output.weight", GgmlType::q6_k},
                         Row{"Q2_K_S", weight(3, "attn_v"), GgmlType::q2_k},
                         Row{"Q2_K_S", weight(3, "attn_output"), GgmlType::q2_k}}) {
        const mq::MixPlan plan = mq::plan_mixture(h, with_imatrix(r.mix));
        BOOST_TEST(type_of(h, plan, r.tensor) == id(r.type), r.mix << " " << r.tensor);
    }
    // IQ3_XS lowers ffn_gate/ffn_up in layers n/8 to 7n/8 - 1 (2 to 13) to IQ3_XXS.
    const mq::MixPlan xs = mq::plan_mixture(h, with_imatrix("IQ3_XS"));
    for (int l = 0; l < 16; ++l) {
        const std::uint32_t want = id(l >= 2 && l < 14 ? GgmlType::iq3_xxs : GgmlType::iq3_s);
        BOOST_TEST(type_of(h, xs, weight(l, "ffn_gate")) == want, l);
        BOOST_TEST(type_of(h, xs, weight(l, "ffn_up")) == want, l);
    }
}

// n_gqa >= 4 and experts lift attn_v (and attn_k/attn_output with 8 experts).
BOOST_AUTO_TEST_CASE(iq_mixtures_with_gqa_and_experts) {
    const ck::ModelHeader gqa = roles_header(8, 32, 8);  // n_gqa 4
    for (const char* mix : {"IQ3_XXS", "IQ2_XXS", "IQ1_S", "IQ2_M", "Q2_K_S", "IQ3_XS", "IQ3_S"}) {
        for (bool imatrix : {false, true}) {
            mq::MixSettings s = settings_for(mix);
            s.has_imatrix = imatrix;
            const mq::MixPlan plan = mq::plan_mixture(gqa, s);  // outlives `v`
            const auto& v = choice(gqa, plan, weight(2, "attn_v"));
            BOOST_TEST(v.type == id(GgmlType::q4_k), mix << " imatrix " << imatrix);
            BOOST_TEST(cktest::contains(v.rule, "n_gqa 4 >= 4"), v.rule);
        }
    }
    for (const char* mix : {"IQ4_XS", "IQ4_NL"})
        BOOST_TEST(type_of(gqa, mq::plan_mixture(gqa, with_imatrix(mix)), weight(2, "attn_v")) ==
                       id(GgmlType::q5_k),
                   mix);

    // Four experts (n_gqa 1): the IQ1/IQ2 mixtures give attn_v Q4_K.
    ck::ModelHeader four = roles_header(8, 8, 8);
    four.metadata.set("llama.expert_count", ck::Value::of_u32(4));
    const mq::MixPlan four_plan = mq::plan_mixture(four, with_imatrix("IQ2_XXS"));
    const auto& v4 = choice(four, four_plan, weight(0, "attn_v"));
    BOOST_TEST(v4.type == id(GgmlType::q4_k));
    BOOST_TEST(cktest::contains(v4.rule, "4 experts"), v4.rule);

    // Eight experts: attn_k Q4_K and attn_output Q5_K for the IQ1/IQ2 mixtures, attn_v stays
    // Q4_K (no Q8_0 lift there); IQ3_M's ffn_down gets Q4_K where use_more_bits holds.
    ck::ModelHeader eight = roles_header(8, 8, 8);
    eight.metadata.set("llama.expert_count", ck::Value::of_u32(8));
    const mq::MixPlan iq2 = mq::plan_mixture(eight, with_imatrix("IQ2_XXS"));
    BOOST_TEST(type_of(eight, iq2, weight(4, "attn_k")) == id(GgmlType::q4_k));
    BOOST_TEST(type_of(eight, iq2, weight(4, "attn_output")) == id(GgmlType::q5_k));
    BOOST_TEST(type_of(eight, iq2, weight(4, "attn_v")) == id(GgmlType::q4_k));
    const mq::MixPlan iq3m = mq::plan_mixture(eight, with_imatrix("IQ3_M"));
    BOOST_TEST(type_of(eight, iq3m, weight(4, "attn_v")) == id(GgmlType::q8_0));
    BOOST_TEST(type_of(eight, iq3m, weight(4, "attn_output")) == id(GgmlType::q5_k));
    // use_more_bits(i, 8): i < 1, i >= 7, or (i - 1) % 3 == 2.
    for (int l = 0; l < 8; ++l) {
        const bool more = l == 0 || l == 3 || l == 6 || l == 7;
        BOOST_TEST(type_of(eight, iq3m, weight(l, "ffn_down")) ==
                       id(more ? GgmlType::q4_k : GgmlType::iq3_s),
                   l);
    }
}

// tensor_requires_imatrix, and the plan's flag: never the embedding or the output; a tensor
// that fell back to IQ4_NL needs none (micro-odd-f16 IQ2_XXS runs without a matrix).
BOOST_AUTO_TEST_CASE(requires_imatrix_by_type_and_file) {
    const std::uint32_t q2_k_s = 21, q2_k = 10, iq2_xxs = 19;
    const std::string k = "blk.0.attn_k.weight";
    for (GgmlType t : {GgmlType::iq1_s, GgmlType::iq1_m, GgmlType::iq2_xxs, GgmlType::iq2_xs,
                       GgmlType::iq2_s, GgmlType::iq3_xxs}) {
        BOOST_TEST(mq::requires_imatrix(k, id(t), iq2_xxs), ck::type_name(id(t)));
        for (const char* name :
             {"token_embd.weight", "per_layer_token_embd.weight", "output.weight"})
            BOOST_TEST(!mq::requires_imatrix(name, id(t), iq2_xxs), name);
    }
    for (GgmlType t : {GgmlType::iq3_s, GgmlType::iq4_xs, GgmlType::iq4_nl, GgmlType::q3_k,
                       GgmlType::q4_k, GgmlType::q4_0, GgmlType::f16})
        BOOST_TEST(!mq::requires_imatrix(k, id(t), iq2_xxs), ck::type_name(id(t)));
    BOOST_TEST(mq::requires_imatrix(k, id(GgmlType::q2_k), q2_k_s));
    BOOST_TEST(!mq::requires_imatrix(k, id(GgmlType::q2_k), q2_k));
    BOOST_TEST(!mq::requires_imatrix(k, id(GgmlType::q2_k), iq2_xxs));
    BOOST_TEST(!mq::requires_imatrix("output.weight", id(GgmlType::q2_k), q2_k_s));

    const ck::ModelHeader h = roles_header(16, 8, 8);
    const mq::MixPlan iq2 = mq::plan_mixture(h, settings_for("IQ2_XXS"));
    BOOST_TEST(choice(h, iq2, weight(0, "attn_k")).requires_imatrix);
    BOOST_TEST(!choice(h, iq2, weight(0, "ffn_down")).requires_imatrix);  // Q2_K
    BOOST_TEST(choice(h, iq2, weight(5, "ffn_down")).requires_imatrix);
    BOOST_TEST(!choice(h, iq2, "token_embd.weight").requires_imatrix);
    BOOST_TEST(!choice(h, iq2, "output.weight").requires_imatrix);
    BOOST_TEST(!choice(h, iq2, weight(0, "attn_norm")).requires_imatrix);
    const mq::MixPlan q2s = mq::plan_mixture(h, settings_for("Q2_K_S"));
    BOOST_TEST(choice(h, q2s, weight(0, "attn_k")).requires_imatrix);
    BOOST_TEST(!choice(h, q2s, weight(0, "ffn_down")).requires_imatrix);  // Q4_K
    for (const char* mix : {"IQ3_S", "IQ3_M", "IQ4_XS", "IQ4_NL", "Q2_K", "Q4_K_M"}) {
        const mq::MixPlan plan = mq::plan_mixture(h, settings_for(mix));
        const bool any = std::any_of(plan.tensors.begin(), plan.tensors.end(),
                                     [](const mq::TensorChoice& c) { return c.requires_imatrix; });
        BOOST_TEST(!any, mix);
    }
    const ck::ModelHeader odd = odd_tied_header();
    const mq::MixPlan fell_back = mq::plan_mixture(odd, settings_for("IQ2_XXS"));
    for (std::size_t i = 0; i < odd.tensors.size(); ++i)
        BOOST_TEST(!fell_back.tensors[i].requires_imatrix, odd.tensors[i].name);
    BOOST_TEST(type_of(odd, fell_back, "blk.0.attn_q.weight") == id(GgmlType::iq4_nl));
}

// --tensor-type: the first pattern that finds the name wins over the mixture (and --pure),
// the fallback still applies, and the overridden tensors do not advance the mixture's counters.
BOOST_AUTO_TEST_CASE(tensor_type_overrides) {
    ck::ModelHeader h = roles_header(12, 8, 8);
    mq::MixSettings s = settings_for("Q3_K_M");
    s.tensor_types = {{"blk\\.0\\.attn_v", id(GgmlType::q8_0)},
                      {"attn_v", id(GgmlType::q6_k)},
                      {"^blk\\.1\\.ffn", id(GgmlType::q5_0)}};
    const mq::MixPlan plan = mq::plan_mixture(h, s);
    const auto& v0 = choice(h, plan, weight(0, "attn_v"));
    BOOST_TEST(v0.type == id(GgmlType::q8_0));
    BOOST_TEST(v0.rule == "--tensor-type blk\\.0\\.attn_v -> Q8_0");
    BOOST_TEST(type_of(h, plan, weight(7, "attn_v")) == id(GgmlType::q6_k));
    BOOST_TEST(type_of(h, plan, weight(1, "ffn_up")) == id(GgmlType::q5_0));
    BOOST_TEST(type_of(h, plan, weight(10, "ffn_up")) == id(GgmlType::q3_k));
    // Only attn_v of layer 0 overridden: layers 1 and 2 are the "first two" Q5_K ones.
    s.tensor_types = {{"blk\\.0\\.attn_v", id(GgmlType::q8_0)}};
    const mq::MixPlan counted = mq::plan_mixture(h, s);
    BOOST_TEST(type_of(h, counted, weight(1, "attn_v")) == id(GgmlType::q5_k));
    BOOST_TEST(type_of(h, counted, weight(2, "attn_v")) == id(GgmlType::q5_k));
    BOOST_TEST(type_of(h, counted, weight(3, "attn_v")) == id(GgmlType::q4_k));
    s.pure = true;
    BOOST_TEST(type_of(h, mq::plan_mixture(h, s), weight(0, "attn_v")) == id(GgmlType::q8_0));

    // The type options come first; a pattern naming per_layer_token_embd.weight wins over
    // --token-embedding-type.
    h.tensors.push_back(tensor("per_layer_token_embd.weight", GgmlType::f16, {256, 1000}));
    mq::MixSettings embd = settings_for("Q4_K_M");
    embd.embd_type = id(GgmlType::q8_0);
    embd.output_type = id(GgmlType::q4_0);
    embd.tensor_types = {{"output|token_embd", id(GgmlType::q5_1)}};
    const mq::MixPlan options = mq::plan_mixture(h, embd);
    BOOST_TEST(type_of(h, options, "token_embd.weight") == id(GgmlType::q8_0));
    BOOST_TEST(type_of(h, options, "output.weight") == id(GgmlType::q4_0));
    BOOST_TEST(type_of(h, options, "per_layer_token_embd.weight") == id(GgmlType::q5_1));
    embd.tensor_types = {{"^token_embd", id(GgmlType::q5_1)}};
    BOOST_TEST(type_of(h, mq::plan_mixture(h, embd), "per_layer_token_embd.weight") ==
               id(GgmlType::q8_0));

    // Not for the float mixtures.
    mq::MixSettings f16 = settings_for("F16");
    f16.tensor_types = {{"attn", id(GgmlType::q8_0)}};
    BOOST_TEST(type_of(h, mq::plan_mixture(h, f16), weight(0, "attn_q")) == id(GgmlType::f16));

    // The fallback still applies: rows of 640 take no Q4_K.
    const ck::ModelHeader odd = odd_tied_header();
    mq::MixSettings q4 = settings_for("Q8_0");
    q4.tensor_types = {{"ffn_down", id(GgmlType::q4_k)}};
    const mq::MixPlan overridden = mq::plan_mixture(odd, q4);  // outlives `down`
    const auto& down = choice(odd, overridden, "blk.0.ffn_down.weight");
    BOOST_TEST(down.type == id(GgmlType::q5_0));
    BOOST_TEST(cktest::contains(down.rule, "--tensor-type ffn_down -> Q4_K; fallback"), down.rule);
}

// A pattern that is no regular expression, or a type llama-quantize cannot store, is a usage
// error naming the pattern.
BOOST_AUTO_TEST_CASE(bad_tensor_type_overrides) {
    const ck::ModelHeader h = roles_header(2, 8, 8);
    for (const mq::TensorTypeOverride& o : {mq::TensorTypeOverride{"blk[", id(GgmlType::q8_0)},
                                            mq::TensorTypeOverride{"(attn", id(GgmlType::q8_0)},
                                            mq::TensorTypeOverride{"attn_v", 4u /* removed Q4_2 */},
                                            mq::TensorTypeOverride{"attn_v", id(GgmlType::q8_k)}}) {
        mq::MixSettings s = settings_for("Q4_K_M");
        s.tensor_types = {{"ffn", id(GgmlType::q8_0)}, o};
        BOOST_CHECK_EXCEPTION(mq::plan_mixture(h, s), ck::Error, [&](const ck::Error& e) {
            return e.kind() == ck::ErrorKind::usage &&
                   cktest::contains(e.message(), "--tensor-type " + o.pattern + ":");
        });
    }
}

BOOST_AUTO_TEST_CASE(matches_llama_quantize, *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    // The input is the only other file there.
    expect_llama_types(quant_cases(root), root / "quant", {"micro-odd-f16.gguf"});
}

// With an importance matrix: every mixture, the odd rows, --tensor-type, the two type options,
// --pure and --leave-output-tensor.
BOOST_AUTO_TEST_CASE(matches_llama_quantize_with_imatrix,
                     *utf::precondition(ImatrixDataPresent())) {
    const fs::path root = *cktest::shared_data();
    BOOST_TEST_MESSAGE("not compared here (the quantize transform's tests): "
                       << "micro-llama-f16.iq2_xs-prune_0.gguf, micro-llama-f16.q2_k-include.gguf, "
                       << "micro-llama-f16.iq3_s-exclude.gguf");
    expect_llama_types(imatrix_cases(root), root / "imatrix", imatrix_not_compared);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- every advertised target runs ----------------------------------------------------------

namespace {

// The names the plugin advertises: `ckhost plugins --json`'s choices of `to`, and the mixtures.
std::vector<std::string> advertised_targets() {
    const cktest::RunResult r = cktest::run_ckhost({"plugins", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    std::vector<std::string> targets;
    for (const auto& p : doc["plugins"])
        if (p["name"] == "quantize")
            for (const auto& o : p["options"])
                if (o["name"] == "to")
                    for (const auto& c : o["choices"])
                        targets.push_back("to=" + c.get<std::string>());
    BOOST_TEST_REQUIRE(targets.size() >= 15u);
    for (const std::string& name : mq::mix_names()) targets.push_back("mix=" + lower(name));
    return targets;
}

// Whether llama-quantize refuses `target` ("mix=iq2_xxs", "to=iq1_s") on `sample` without an
// importance matrix (requires_imatrix): that refusal, and the conversions with a matrix, are
// the quantize transform's tests.
bool needs_imatrix(const std::string& target, const ck::ModelHeader& sample) {
    const std::string value = target.substr(target.find('=') + 1);
    if (target.starts_with("mix=")) {
        const mq::MixPlan plan = mq::plan_mixture(sample, settings_for(value));
        return std::any_of(plan.tensors.begin(), plan.tensors.end(),
                           [](const mq::TensorChoice& c) { return c.requires_imatrix; });
    }
    const ck::TypeInfo* type = ck::find_type(std::string_view(value));
    return type &&
           std::any_of(sample.tensors.begin(), sample.tensors.end(), [&](const ck::TensorInfo& t) {
               return !mq::not_quantizable(t) && mq::requires_imatrix(t.name, type->id, 0);
           });
}

}  // namespace

// Every `to=` and `mix=` value the plugin advertises converts the sample model (its Q4_K/Q6_K
// weights dequantized exactly first): `mix=f32` crashed with SIGSEGV on a null quantizer while
// --dry-run planned it, leaving a 0-byte temporary file behind. Those llama-quantize makes only
// with an importance matrix are left to the quantize transform's tests.
BOOST_AUTO_TEST_CASE(every_advertised_target_converts) {
    cktest::TempDir dir;
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader sample = reader.open(cktest::sample_model());
    for (const std::string& target : advertised_targets()) {
        if (needs_imatrix(target, sample)) {
            BOOST_TEST_MESSAGE(target << ": needs an importance matrix, not run here");
            continue;
        }
        const fs::path out = dir / "o.gguf";
        const auto r = cktest::run_ckhost(
            {"--pipeline", "gguf:quantize[" + target + ",requantize=1]:gguf", "-i",
             cktest::sample_model().string(), "-o", out.string(), "--force", "--quiet"});
        BOOST_TEST(r.exit_code == 0, target << ": exit " << r.exit_code << " " << r.err);
        const auto left = dir.entries();
        BOOST_TEST((left == std::vector<std::string>{"o.gguf"}), target);
    }
}
}  // namespace unity_test_quantize_mixture
