// `ckhost convert-lora` on PEFT adapter folders made here (no reference needed): the
// converter's names, order, permutation, transposition, keys and types checked against their
// definitions, and every refusal with its exit code, a message naming the problem and nothing
// written.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../hf/checkpoint_files.hpp"
#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_lora_convert {

namespace fs = std::filesystem;
using cktest::contains;
using json = nlohmann::ordered_json;

namespace {

// One tensor of a safetensors file: F32 values, numpy shape.
struct StTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

StTensor counting(std::string name, std::vector<std::int64_t> shape, float first) {
    std::size_t n = 1;
    for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = first + 0.001f * static_cast<float>(i);
    return {std::move(name), std::move(shape), std::move(v)};
}

// safetensors' save_file layout (F32 only): the header, padded to 8 bytes, then the data.
void write_safetensors(const fs::path& path, const std::vector<StTensor>& tensors) {
    json header = json::object();
    header["__metadata__"] = {{"format", "pt"}};
    std::vector<unsigned char> data;
    for (const StTensor& t : tensors) {
        const std::size_t begin = data.size();
        for (float v : t.values) {
            const auto u = std::bit_cast<std::uint32_t>(v);
            for (int b = 0; b < 4; ++b) data.push_back(static_cast<unsigned char>(u >> (8 * b)));
        }
        header[t.name] = {
            {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
    }
    cktest::hf::write_safetensors_file(path, header, data);
}

// A llama base config: hidden 32, 4 heads of 8 (2 KV heads), FFN 16, 2 layers, vocabulary 10.
json base_config() {
    return {{"architectures", {"LlamaForCausalLM"}},
            {"hidden_size", 32},
            {"intermediate_size", 16},
            {"num_attention_heads", 4},
            {"num_key_value_heads", 2},
            {"num_hidden_layers", 2},
            {"vocab_size", 10},
            {"rms_norm_eps", 1e-5},
            {"max_position_embeddings", 64}};
}

json adapter_config() {
    return {{"peft_type", "LORA"}, {"r", 4},
            {"lora_alpha", 8},     {"use_rslora", false},
            {"use_dora", false},   {"base_model_name_or_path", "base"}};
}

std::string lora(const std::string& module, char factor) {
    return "base_model.model.model.layers." + module + ".lora_" + factor + ".weight";
}

// An adapter of rank 4 on layer 0's q_proj and k_proj and layer 1's down_proj.
std::vector<StTensor> adapter_tensors() {
    return {counting(lora("0.self_attn.q_proj", 'A'), {4, 32}, 0.1f),
            counting(lora("0.self_attn.q_proj", 'B'), {32, 4}, 0.2f),
            counting(lora("0.self_attn.k_proj", 'A'), {4, 32}, 0.3f),
            counting(lora("0.self_attn.k_proj", 'B'), {16, 4}, 0.4f),
            counting(lora("1.mlp.down_proj", 'A'), {4, 16}, 0.5f),
            counting(lora("1.mlp.down_proj", 'B'), {32, 4}, 0.6f)};
}

struct Folders {
    cktest::TempDir dir;
    fs::path base = dir / "base";
    fs::path adapter = dir / "my-adapter-lora-r4";
    Folders(const json& config = adapter_config(),
            const std::vector<StTensor>& tensors = adapter_tensors(),
            const json& base_json = base_config()) {
        fs::create_directories(base);
        fs::create_directories(adapter);
        std::ofstream(base / "config.json") << base_json.dump(2);
        std::ofstream(adapter / "adapter_config.json") << config.dump(2);
        write_safetensors(adapter / "adapter_model.safetensors", tensors);
    }
};

cktest::RunResult convert_lora(const Folders& f, const fs::path& out,
                               std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"convert-lora",  f.adapter.string(), "--base",
                                     f.base.string(), "--outfile",        out.string()};
    args.insert(args.end(), more.begin(), more.end());
    return cktest::run_ckhost(args);
}

ck::ModelHeader read_header(const fs::path& path) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    return reader.open(path);
}

std::vector<float> read_f32(const fs::path& path, const std::string& name) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader h = reader.open(path);
    for (std::size_t i = 0; i < h.tensors.size(); ++i)
        if (h.tensors[i].name == name) return cktest::floats_of(reader.tensor(i).bytes());
    throw std::runtime_error("no tensor " + name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lora_convert)

// Names, order (sorted keys: layers.0.self_attn.k before q, layers.1 after), shapes, keys.
BOOST_AUTO_TEST_CASE(names_order_and_keys_as_the_converter) {
    Folders f;
    const fs::path out = f.dir / "a.gguf";
    const auto r = convert_lora(f, out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const ck::ModelHeader h = read_header(out);
    std::vector<std::string> names;
    for (const auto& t : h.tensors) names.push_back(t.name + " " + t.shape_string());
    const std::vector<std::string> expected = {
        "blk.0.attn_k.weight.lora_a [32, 4]",   "blk.0.attn_k.weight.lora_b [4, 16]",
        "blk.0.attn_q.weight.lora_a [32, 4]",   "blk.0.attn_q.weight.lora_b [4, 32]",
        "blk.1.ffn_down.weight.lora_a [16, 4]", "blk.1.ffn_down.weight.lora_b [4, 32]"};
    BOOST_TEST(names == expected, boost::test_tools::per_element());
    std::vector<std::string> keys;
    for (const auto& [key, value] : h.metadata) keys.push_back(key);
    const std::vector<std::string> expected_keys = {
        "general.architecture", "general.type",
        "adapter.type",         "general.name",
        "general.finetune",     "general.basename",
        "adapter.lora.alpha",   "general.quantization_version"};
    BOOST_TEST(keys == expected_keys, boost::test_tools::per_element());
    BOOST_TEST(h.metadata.find("general.type")->str() == "adapter");
    BOOST_TEST(h.metadata.find("general.name")->str() == "My Adapter Lora R4");
    BOOST_TEST(h.metadata.find("general.basename")->str() == "my-adapter");
    BOOST_TEST(h.metadata.find("general.finetune")->str() == "r4");
    BOOST_TEST(*h.metadata.find("adapter.lora.alpha")->as_f32() == 8.0f);
}

// q's and k's B rows leave Hugging Face's rotary layout per head (4 query heads, 2 KV heads of
// 8 rows); A and the other modules are as stored.
BOOST_AUTO_TEST_CASE(q_and_k_rows_permuted_in_b_only) {
    Folders f;
    const fs::path out = f.dir / "a.gguf";
    BOOST_TEST_REQUIRE(convert_lora(f, out).exit_code == 0);
    const auto tensors = adapter_tensors();
    for (const auto& [name, index, heads] : {std::tuple("blk.0.attn_q.weight.lora_b", 1, 4),
                                             std::tuple("blk.0.attn_k.weight.lora_b", 3, 2)}) {
        const std::vector<float> got = read_f32(out, name);
        const StTensor& b = tensors[static_cast<std::size_t>(index)];
        const std::int64_t rows = b.shape[0], d = rows / heads;
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t i = 0; i < d / 2; ++i)
                for (std::int64_t j = 0; j < 2; ++j)
                    for (std::int64_t k = 0; k < 4; ++k)
                        BOOST_TEST(
                            got[static_cast<std::size_t>((h * d + 2 * i + j) * 4 + k)] ==
                            b.values[static_cast<std::size_t>((h * d + j * (d / 2) + i) * 4 + k)]);
    }
    BOOST_TEST(read_f32(out, "blk.0.attn_q.weight.lora_a") == tensors[0].values);
    BOOST_TEST(read_f32(out, "blk.1.ffn_down.weight.lora_b") == tensors[5].values);
}

// --outtype q8_0: Q8_0 where rows are 32 values (lora_a of q/k), F16 elsewhere.
BOOST_AUTO_TEST_CASE(outtypes) {
    Folders f;
    for (const auto& [outtype, a_type, b_type] :
         {std::tuple("f16", "f16", "f16"), std::tuple("bf16", "bf16", "bf16"),
          std::tuple("q8_0", "q8_0", "f16")}) {
        const fs::path out = f.dir / (std::string(outtype) + ".gguf");
        const auto r = convert_lora(f, out, {"--outtype", outtype});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const ck::ModelHeader h = read_header(out);
        BOOST_TEST(ck::type_name(h.find_tensor("blk.0.attn_q.weight.lora_a")->type) == a_type);
        BOOST_TEST(ck::type_name(h.find_tensor("blk.0.attn_q.weight.lora_b")->type) == b_type);
    }
}

// rsLoRA: the converter's alpha kept with a warning naming both scales; --peft-scale writes
// lora_alpha * sqrt(r).
BOOST_AUTO_TEST_CASE(rslora_warns_and_peft_scale_rescales) {
    json config = adapter_config();
    config["use_rslora"] = true;
    Folders f(config);
    auto r = convert_lora(f, f.dir / "a.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "use_rslora"), r.err);
    BOOST_TEST(contains(r.err, "lora_alpha / sqrt(r) = 4"), r.err);
    BOOST_TEST(*read_header(f.dir / "a.gguf").metadata.find("adapter.lora.alpha")->as_f32() ==
               8.0f);
    r = convert_lora(f, f.dir / "b.gguf", {"--peft-scale"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(*read_header(f.dir / "b.gguf").metadata.find("adapter.lora.alpha")->as_f32() ==
               16.0f);
}

// Without --outfile: the converter's name in the adapter's folder; {ftype} in --outfile.
BOOST_AUTO_TEST_CASE(default_and_templated_file_names) {
    Folders f;
    auto r = cktest::run_ckhost(
        {"convert-lora", f.adapter.string(), "--base", f.base.string(), "--outtype", "bf16"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(fs::exists(f.adapter / "my-adapter-r4-BF16-LoRA.gguf"));
    r = convert_lora(f, f.dir / "a-{ftype}-{FTYPE}.gguf", {"--outtype", "q8_0"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(fs::exists(f.dir / "a-q8_0-Q8_0.gguf"));
}

// The embedding's factors (lora_embedding_A/B): lora_a written transposed, lora_b as stored.
BOOST_AUTO_TEST_CASE(embedding_lora_a_transposed) {
    auto tensors = adapter_tensors();
    tensors.push_back(counting("base_model.model.model.embed_tokens.lora_embedding_A", {4, 10}, 1));
    tensors.push_back(counting("base_model.model.model.embed_tokens.lora_embedding_B", {32, 4}, 2));
    Folders f(adapter_config(), tensors);
    const fs::path out = f.dir / "a.gguf";
    const auto r = convert_lora(f, out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const ck::ModelHeader h = read_header(out);
    BOOST_TEST(h.find_tensor("token_embd.weight.lora_a")->shape_string() == "[4, 10]");
    BOOST_TEST(h.find_tensor("token_embd.weight.lora_b")->shape_string() == "[4, 32]");
    const std::vector<float> a = read_f32(out, "token_embd.weight.lora_a");
    const StTensor& stored = tensors[tensors.size() - 2];
    for (std::size_t v = 0; v < 10; ++v)
        for (std::size_t k = 0; k < 4; ++k) BOOST_TEST(a[v * 4 + k] == stored.values[k * 10 + v]);
    BOOST_TEST(read_f32(out, "token_embd.weight.lora_b") == tensors.back().values);
}

// Mixtral's experts: each part's factors stacked over the experts, in the converter's order
// (w1, w2, w3 once the layer has all of them); a layer with some experts left out is refused.
BOOST_AUTO_TEST_CASE(expert_factors_stacked) {
    json config = base_config();
    config["architectures"] = {"MixtralForCausalLM"};
    config["num_local_experts"] = 2;
    config["num_experts_per_tok"] = 2;
    std::vector<StTensor> tensors;
    const auto expert = [](int e, const char* w) {
        return "0.block_sparse_moe.experts." + std::to_string(e) + "." + w;
    };
    for (int e = 0; e < 2; ++e)
        for (const char* w : {"w1", "w2", "w3"}) {
            const bool down = std::string(w) == "w2";
            tensors.push_back(counting(lora(expert(e, w), 'A'), {4, down ? 16 : 32}, float(e)));
            tensors.push_back(counting(lora(expert(e, w), 'B'), {down ? 32 : 16, 4}, float(e)));
        }
    Folders f(adapter_config(), tensors, config);
    const fs::path out = f.dir / "a.gguf";
    auto r = convert_lora(f, out);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const ck::ModelHeader h = read_header(out);
    std::vector<std::string> names;
    for (const auto& t : h.tensors) names.push_back(t.name + " " + t.shape_string());
    const std::vector<std::string> expected = {"blk.0.ffn_gate_exps.weight.lora_a [32, 4, 2]",
                                               "blk.0.ffn_gate_exps.weight.lora_b [4, 16, 2]",
                                               "blk.0.ffn_down_exps.weight.lora_a [16, 4, 2]",
                                               "blk.0.ffn_down_exps.weight.lora_b [4, 32, 2]",
                                               "blk.0.ffn_up_exps.weight.lora_a [32, 4, 2]",
                                               "blk.0.ffn_up_exps.weight.lora_b [4, 16, 2]"};
    BOOST_TEST(names == expected, boost::test_tools::per_element());
    tensors.resize(tensors.size() - 2);  // expert 1's w3 left out
    Folders partial(adapter_config(), tensors, config);
    r = convert_lora(partial, partial.dir / "a.gguf");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "does not change all of that layer's 6 expert tensors"), r.err);
}

// Gemma 2's converter leaves an lm_head LoRA out (llama.cpp's gemma2 has no output.weight):
// said; a tied llama base's lm_head LoRA is written but said to be unloadable.
BOOST_AUTO_TEST_CASE(lm_head_loras_are_said) {
    auto tensors = adapter_tensors();
    tensors.push_back(counting("base_model.model.lm_head.lora_A.weight", {4, 32}, 0));
    tensors.push_back(counting("base_model.model.lm_head.lora_B.weight", {10, 4}, 0));
    json tied = base_config();
    tied["tie_word_embeddings"] = true;
    Folders f(adapter_config(), tensors, tied);
    auto r = convert_lora(f, f.dir / "a.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "tensor 'output.weight.lora_a': a LoRA of lm_head"), r.err);
    BOOST_TEST(read_header(f.dir / "a.gguf").find_tensor("output.weight.lora_b") != nullptr);
    json gemma = base_config();
    gemma["architectures"] = {"Gemma2ForCausalLM"};
    gemma["head_dim"] = 8;
    Folders g(adapter_config(), tensors, gemma);
    r = convert_lora(g, g.dir / "a.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "lm_head.lora_A.weight': left out"), r.err);
    BOOST_TEST(read_header(g.dir / "a.gguf").find_tensor("output.weight.lora_a") == nullptr);
}

// Each refusal: exit 1, the message naming the problem, nothing written.
BOOST_AUTO_TEST_CASE(refusals) {
    struct Case {
        const char* what;
        json config;
        std::vector<StTensor> tensors;
        std::vector<const char*> message;
    };
    json dora = adapter_config();
    dora["use_dora"] = true;
    json ia3 = adapter_config();
    ia3["peft_type"] = "IA3";
    auto magnitude = adapter_tensors();
    magnitude.push_back(counting(
        "base_model.model.model.layers.0.self_attn.q_proj.lora_magnitude_vector", {32}, 1));
    auto unmapped = adapter_tensors();
    unmapped.push_back(counting(lora("0.mlp.fc_in", 'A'), {4, 32}, 0));
    unmapped.push_back(counting(lora("0.mlp.fc_in", 'B'), {16, 4}, 0));
    auto beyond = adapter_tensors();
    beyond.push_back(counting(lora("2.mlp.down_proj", 'A'), {4, 16}, 0));
    beyond.push_back(counting(lora("2.mlp.down_proj", 'B'), {32, 4}, 0));
    auto unpaired = adapter_tensors();
    unpaired.pop_back();
    auto embedding = adapter_tensors();
    embedding.push_back(counting("base_model.model.model.embed_tokens.weight", {10, 32}, 0));
    auto mismatched = adapter_tensors();
    mismatched[1] = counting(lora("0.self_attn.q_proj", 'B'), {32, 5}, 0);
    const std::vector<Case> cases = {
        {"dora config", dora, adapter_tensors(), {"use_dora", "DoRA"}},
        {"not a lora", ia3, adapter_tensors(), {"peft_type", "not a LoRA"}},
        {"dora tensor", adapter_config(), magnitude, {"lora_magnitude_vector", "DoRA"}},
        {"unmapped",
         adapter_config(),
         unmapped,
         {"model.layers.0.mlp.fc_in.weight", "no llama.cpp name"}},
        {"beyond the layers", adapter_config(), beyond, {"model.layers.2.mlp.down_proj.weight"}},
        {"unpaired", adapter_config(), unpaired, {"1.mlp.down_proj.lora_A.weight", "no lora_B"}},
        {"embedding", adapter_config(), embedding, {"embed_tokens.weight", "new tokens"}},
        {"rank", adapter_config(), mismatched, {"q_proj.lora_B.weight", "does not pair"}},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.what) {
            Folders f(c.config, c.tensors);
            const auto r = convert_lora(f, f.dir / "out" / "a.gguf");
            BOOST_TEST(r.exit_code == 1, r.err);
            for (const char* part : c.message) BOOST_TEST(contains(r.err, part), r.err);
            BOOST_TEST(!fs::exists(f.dir / "out"));
        }
    }
    // A NaN in a factor cannot become Q8_0 (found by the lora_adapter fuzz target): refused,
    // naming the tensor; f32 keeps it as the converter does.
    auto poisoned = adapter_tensors();
    poisoned[0].values[3] = std::numeric_limits<float>::quiet_NaN();
    {
        Folders nan(adapter_config(), poisoned);
        const auto r = convert_lora(nan, nan.dir / "out" / "a.gguf", {"--outtype", "q8_0"});
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, "holds NaN at element 3: Q8_0 cannot encode it"), r.err);
        BOOST_TEST(!fs::exists(nan.dir / "out"));
        BOOST_TEST(convert_lora(nan, nan.dir / "f32.gguf").exit_code == 0);
    }
    // No base: the adapter's base_model_name_or_path ("base") is no folder here.
    Folders f;
    const auto r = cktest::run_ckhost(
        {"convert-lora", f.adapter.string(), "--outfile", (f.dir / "a.gguf").string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "give base=FOLDER"), r.err);
    BOOST_TEST(!fs::exists(f.dir / "a.gguf"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_lora_convert
