// llama-quantize's mixtures (plugins/quantize/mixture.hpp): the type chosen for every tensor
// equals what llama.cpp's llama-quantize wrote into ../shared/testdata/quant/ (see its
// README.md), tensor by tensor; and, without the shared data, the name lookup, the fallback
// types, tied embeddings and the per-layer counters on small headers built here.
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

// One row of quant/README.md's table.
struct QuantCase {
    std::string output;  // in quant/
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
std::vector<std::string> compare_with_llama(const QuantCase& c, const fs::path& quant) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader in_reader(context), out_reader(context);
    const ck::ModelHeader in = in_reader.open(c.input);
    const ck::ModelHeader out = out_reader.open(quant / c.output);

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
    for (const char* name : {"", "q4", "q4_k_x", "Q4_K_M ", " q4_k_m", "q2_k_s", "iq2_xxs", "iq3_m",
                             "mxfp4_moe", "copy", "15", "q4_k_m_s"}) {
        BOOST_TEST(!mq::find_mix(name).has_value(), "'" << name << "'");
    }
}

BOOST_AUTO_TEST_CASE(every_listed_name_is_found) {
    const std::vector<std::string> names = mq::mix_names();
    BOOST_TEST(names.size() == 20u);
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

BOOST_AUTO_TEST_CASE(matches_llama_quantize, *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    const fs::path quant = root / "quant";
    const std::vector<QuantCase> cases = quant_cases(root);

    // Every output in quant/ has a row here (the inputs are the only other files).
    std::vector<std::string> unlisted;
    for (const auto& entry : fs::directory_iterator(quant)) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() != ".gguf" || name == "micro-odd-f16.gguf") continue;
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
            BOOST_TEST_REQUIRE(fs::exists(quant / c.output), "missing " << c.output);
            const std::vector<std::string> problems = compare_with_llama(c, quant);
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

}  // namespace

// Every `to=` and `mix=` value the plugin advertises converts the sample model (its Q4_K/Q6_K
// weights dequantized exactly first): `mix=f32` crashed with SIGSEGV on a null quantizer while
// --dry-run planned it, leaving a 0-byte temporary file behind.
BOOST_AUTO_TEST_CASE(every_advertised_target_converts) {
    cktest::TempDir dir;
    for (const std::string& target : advertised_targets()) {
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
