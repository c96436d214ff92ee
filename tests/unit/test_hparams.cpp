// The one reader of model hyperparameters (ck/llama/hparams.hpp): on the GGUF files llama.cpp's
// converter wrote for today's architectures (../shared/testdata/hf-arch), every value agrees
// with the checkpoint's config.json; per-layer arrays, the llama.* fallback and every refusal
// on metadata built in process.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/llama/hparams.hpp"
#include "ck/llama/llama_keys.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_hparams {

namespace {

using ck::llama::Hyperparameters;
using ck::llama::read_hyperparameters;

// The message of the ck::Error `fn` throws, or "" when it throws none.
template <class Fn>
std::string error_of(Fn fn) {
    try {
        fn();
    } catch (const ck::Error& e) {
        return e.subject() + ": " + e.message();
    }
    return "";
}

ck::Value u32_array(const std::vector<std::uint32_t>& values) {
    return ck::Value::of_array(ck::ArrayValue::of<std::uint32_t>(ck::ValueType::u32, values));
}

ck::Value i32_array(const std::vector<std::int32_t>& values) {
    return ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(ck::ValueType::i32, values));
}

ck::Metadata arch_metadata(const std::string& arch) {
    ck::Metadata md;
    md.set("general.architecture", ck::Value::of_string(arch));
    return md;
}

std::uint32_t config_u32(const nlohmann::json& config, const char* key) {
    return config.at(key).get<std::uint32_t>();
}

// config.json's values as convert_hf_to_gguf.py maps them to GGUF keys.
void check_against_config(const std::string& name) {
    const auto dir = *cktest::shared_data() / "hf-arch";
    const nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / name / "config.json"));
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(dir / (name + ".bf16.gguf"));
    const Hyperparameters hp = read_hyperparameters(header.metadata, header.source);
    BOOST_TEST_CONTEXT(name << " (" << hp.arch << ")") {
        BOOST_TEST(hp.arch_stated);
        BOOST_TEST(*hp.block_count == config_u32(config, "num_hidden_layers"));
        BOOST_TEST(*hp.embedding_length == config_u32(config, "hidden_size"));
        BOOST_TEST(hp.head_count->first() == config_u32(config, "num_attention_heads"));
        BOOST_TEST(hp.head_count->uniform());
        BOOST_TEST(hp.head_count_kv->first() == config_u32(config, "num_key_value_heads"));
        BOOST_TEST(*hp.context_length == config_u32(config, "max_position_embeddings"));
        BOOST_TEST(hp.feed_forward_length->first() == config_u32(config, "intermediate_size"));
        // The converter writes the head size only where it is not hidden_size / heads.
        if (config.contains("head_dim") && !config["head_dim"].is_null())
            BOOST_TEST(*hp.key_length == config_u32(config, "head_dim"));
        const char* experts = config.contains("num_local_experts") ? "num_local_experts"
                              : config.contains("num_experts")     ? "num_experts"
                                                                   : nullptr;
        BOOST_TEST(hp.expert_count == (experts ? config_u32(config, experts) : 0u));
        BOOST_TEST(hp.expert_used_count ==
                   (experts ? config_u32(config, "num_experts_per_tok") : 0u));
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hyperparameters)

BOOST_AUTO_TEST_CASE(todays_architectures_read_as_their_config_says,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    for (const char* name :
         {"llama31-bf16", "qwen3-bf16", "qwen3moe-bf16", "mixtral-bf16", "gemma2-bf16",
          "gemma3-bf16", "phi3-bf16", "phi3-longrope-bf16", "mistral-nemo-bf16"})
        check_against_config(name);
}

BOOST_AUTO_TEST_CASE(per_layer_arrays_and_the_llama_fallback) {
    ck::Metadata md = arch_metadata("openelm");
    md.set("openelm.block_count", ck::Value::of_u32(3));
    md.set("openelm.attention.head_count", u32_array({4, 8, 12}));
    md.set("llama.attention.head_count_kv", ck::Value::of_u32(2));  // found through the fallback
    const Hyperparameters hp = read_hyperparameters(md);
    BOOST_TEST(hp.head_count->values() == std::vector<std::uint32_t>({4, 8, 12}));
    BOOST_TEST(hp.head_count->layer(2) == 12u);
    BOOST_TEST(!hp.head_count->uniform());
    BOOST_TEST(hp.head_count_kv->layer(2) == 2u);
    BOOST_TEST(hp.head_count_kv->key() == "llama.attention.head_count_kv");
    BOOST_TEST(!hp.embedding_length.has_value());
    BOOST_TEST(hp.expert_count == 0u);

    const Hyperparameters none = read_hyperparameters(ck::Metadata{});
    BOOST_TEST(none.arch == "llama");
    BOOST_TEST(!none.arch_stated);
}

BOOST_AUTO_TEST_CASE(refusals_name_the_key_and_the_problem) {
    ck::Metadata md = arch_metadata("qwen3");
    md.set("qwen3.block_count", ck::Value::of_u32(2));
    md.set("qwen3.attention.head_count", u32_array({4, 4, 4}));
    BOOST_TEST(error_of([&] { read_hyperparameters(md); }) ==
               "key 'qwen3.attention.head_count': has 3 per-layer values, expected one per "
               "layer (qwen3.block_count is 2)");
    md.set("qwen3.attention.head_count", i32_array({4, -1}));
    BOOST_TEST(error_of([&] { read_hyperparameters(md); }) ==
               "key 'qwen3.attention.head_count': element 1 is negative; expected a count");
    md.set("qwen3.attention.head_count", ck::Value::of_string("4"));
    BOOST_TEST(error_of([&] { read_hyperparameters(md); }) ==
               "key 'qwen3.attention.head_count': expected an integer between 0 and 4294967295, "
               "got \"4\"");
    md.set("qwen3.attention.head_count", ck::Value::of_u32(4));
    md.set("qwen3.expert_count", ck::Value::of_f32(4.0f));
    BOOST_TEST(error_of([&] {
                   read_hyperparameters(md, "model.gguf");
               }).starts_with("key 'qwen3.expert_count': expected an integer"));
    try {
        read_hyperparameters(md, "model.gguf");
    } catch (const ck::Error& e) {
        BOOST_TEST(e.file() == "model.gguf");
    }
}

// Head packing cuts every layer alike: per-layer head counts must agree.
BOOST_AUTO_TEST_CASE(head_geometry_refuses_heads_that_differ_per_layer) {
    ck::ModelHeader header;
    header.metadata = arch_metadata("openelm");
    header.metadata.set("openelm.block_count", ck::Value::of_u32(2));
    header.metadata.set("openelm.attention.head_count", u32_array({4, 4}));
    ck::TensorInfo embd;
    embd.name = "token_embd.weight";
    embd.ne = {64, 32};
    header.tensors.push_back(embd);
    const ck::llama::HeadGeometry g =
        ck::llama::head_geometry(header, read_hyperparameters(header.metadata));
    BOOST_TEST(g.heads == 4u);
    BOOST_TEST(g.kv_heads == 4u);
    BOOST_TEST(g.head_dim == 16u);
    header.metadata.set("openelm.attention.head_count", u32_array({4, 8}));
    BOOST_TEST(error_of([&] {
                   ck::llama::head_geometry(header, ck::llama::ArchKeys(header.metadata));
               }).starts_with("key 'openelm.attention.head_count': per-layer values differ"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_hparams
