// The hf writer's config.json (issue 31), in process: for every checkpoint in
// ../shared/testdata/hf and hf-arch, the hf reader's header (and its generated tensors' values)
// gives back a config.json in which every key llama.cpp's converter reads has the value the
// original has, as the converter reads it; and that config.json, in place of the original,
// makes the reader give the same GGUF metadata. Then the recovered rope scaling (Llama 3's
// rope_freqs over more shapes, Phi-3's factors, linear and yarn keys), the JSON text as
// save_pretrained writes it, and the refusals.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "architectures.hpp"
#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/support/python_float.hpp"
#include "export_config.hpp"
#include "export_rope.hpp"
#include "generated_tensors.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "hf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_hf_export_config {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using json = nlohmann::ordered_json;
using ckplugin::hf::GeneratedValues;

namespace {

// Every checkpoint folder (one with a config.json) of ../shared/testdata/hf and hf-arch.
std::vector<fs::path> checkpoint_folders() {
    std::vector<fs::path> folders;
    const auto shared = cktest::shared_data();
    if (!shared) return folders;
    for (const char* set : {"hf", "hf-arch"}) {
        if (!fs::is_directory(*shared / set)) continue;
        for (const auto& entry : fs::directory_iterator(*shared / set))
            if (fs::is_regular_file(entry.path() / "config.json")) folders.push_back(entry.path());
    }
    std::sort(folders.begin(), folders.end());
    return folders;
}

std::optional<fs::path> arch_folder(const std::string& name) {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_regular_file(*shared / "hf-arch" / name / "config.json"))
        return std::nullopt;
    return *shared / "hf-arch" / name;
}

struct CheckpointsPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(!checkpoint_folders().empty());
        ok.message() << "../shared/testdata/hf and hf-arch are absent (CKHOST_SHARED_TESTDATA): "
                        "skipping the config.json round trips";
        return ok;
    }
};

struct ArchPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(arch_folder("llama31-bf16").has_value() &&
                                               arch_folder("phi3-longrope-bf16").has_value());
        ok.message() << "../shared/testdata/hf-arch is absent (CKHOST_SHARED_TESTDATA): skipping";
        return ok;
    }
};

json read_json(const fs::path& file) {
    return json::parse(std::ifstream(file));
}

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// `folder` as a checkpoint in `dir` under the same name (general.name comes from it): each
// file a symbolic link to the original, config.json the original's or `config_text`. A file
// whose whole content is a relative path to a file beside it is a symbolic link that lost its
// kind in a copy of the test data (qwen3moe-bf16/tokenizer.json): it links to its target.
fs::path assemble(const fs::path& folder, const cktest::TempDir& dir,
                  const std::optional<std::string>& config_text = std::nullopt) {
    const fs::path to = dir / folder.filename().string();
    fs::create_directories(to);
    for (const auto& entry : fs::directory_iterator(folder)) {
        const fs::path name = entry.path().filename();
        if (name == "config.json" && config_text) continue;
        fs::path source = fs::absolute(entry.path());
        if (fs::file_size(source) < 256) {
            std::string text;
            std::getline(std::ifstream(source), text);
            if (text.starts_with("../") && fs::is_regular_file(folder / text))
                source = fs::absolute(folder / text);
        }
        fs::create_symlink(source, to / name);
    }
    if (config_text) std::ofstream(to / "config.json", std::ios::binary) << *config_text;
    return to;
}

// A checkpoint opened by the hf reader, with its generated tensors' values.
struct Opened {
    std::unique_ptr<ck::RecordingContext> context = std::make_unique<ck::RecordingContext>();
    std::unique_ptr<ckplugin::hf::HfReader> reader;
    ck::ModelHeader header;
    GeneratedValues generated;
};

void take_generated(const std::string& name, std::vector<float> values, GeneratedValues& g) {
    if (name == "rope_freqs.weight") g.rope_freqs = std::move(values);
    if (name == "rope_factors_long.weight") g.rope_factors_long = std::move(values);
    if (name == "rope_factors_short.weight") g.rope_factors_short = std::move(values);
}

Opened open_checkpoint(const fs::path& folder) {
    Opened o;
    o.reader = std::make_unique<ckplugin::hf::HfReader>(*o.context);
    o.header = o.reader->open(folder);
    for (std::size_t i = 0; i < o.header.tensors.size(); ++i)
        if (ckplugin::hf::is_generated_tensor(o.header.tensors[i].name))
            take_generated(o.header.tensors[i].name, cktest::floats_of(o.reader->tensor(i).bytes()),
                           o.generated);
    return o;
}

json export_of(const ck::ModelHeader& header, const std::optional<GeneratedValues>& generated,
               std::string_view requested_class = {}) {
    const auto target = ckplugin::hf::choose_export_target(header, requested_class);
    return ckplugin::hf::export_config(header, target, "bfloat16", generated);
}

// The config.json keys the converter reads for `a` (every rule's names and the fixed ones),
// and those the writer fills from its defaults, which the originals also have.
std::set<std::string> compared_keys(const ckplugin::hf::Architecture& a) {
    std::set<std::string> keys = {
        "architectures", "model_type", "rope_theta", "rope_scaling", "head_dim", "vocab_size",
        "tie_word_embeddings", "bos_token_id", "eos_token_id", "pad_token_id", "unk_token_id",
        "sep_token_id", "mask_token_id", "partial_rotary_factor", "sliding_window",
        "rope_local_base_freq", "sliding_window_pattern", "original_max_position_embeddings",
        "is_causal", "torch_dtype",
        // defaults, checked against the real families' configs
        "hidden_act", "hidden_activation", "query_pre_attn_scalar", "attention_bias", "mlp_bias",
        "use_sliding_window", "norm_topk_prob", "decoder_sparse_step", "mlp_only_layers",
        "attn_logit_softcapping", "final_logit_softcapping"};
    for (const auto& rule : a.keys)
        for (const char* n : rule.names) keys.insert(n);
    return keys;
}

// Empty when `got` holds what the converter reads from `want`: integers equal, floats equal
// once rounded to f32, lists and objects member by member; null is the same as absent.
std::string difference(const json& want, const json* got, const std::string& path) {
    if (want.is_null()) return !got || got->is_null() ? "" : path + ": " + got->dump();
    if (!got) return path + ": absent, the original has " + want.dump();
    if (want.is_number() && got->is_number()) {
        if (want.is_number_integer() && got->is_number_integer())
            return want == *got ? "" : path + ": " + got->dump() + " for " + want.dump();
        return static_cast<float>(want.get<double>()) == static_cast<float>(got->get<double>())
                   ? ""
                   : path + ": " + got->dump() + " for " + want.dump();
    }
    if (want.type() != got->type()) return path + ": " + got->dump() + " for " + want.dump();
    if (want.is_array()) {
        if (want.size() != got->size()) return path + ": " + std::to_string(got->size()) + " items";
        for (std::size_t i = 0; i < want.size(); ++i)
            if (auto d = difference(want[i], &(*got)[i], path + "[" + std::to_string(i) + "]");
                !d.empty())
                return d;
        return "";
    }
    if (want.is_object()) {
        for (auto it = got->begin(); it != got->end(); ++it)
            if (!want.contains(it.key())) return path + "." + it.key() + ": not in the original";
        for (auto it = want.begin(); it != want.end(); ++it) {
            const auto g = got->find(it.key());
            if (auto d =
                    difference(it.value(), g == got->end() ? nullptr : &*g, path + "." + it.key());
                !d.empty())
                return d;
        }
        return "";
    }
    return want == *got ? "" : path + ": " + got->dump() + " for " + want.dump();
}

// Every float of `got` under the same path as a float of `want` is printed no longer than the
// original prints it (the shortest decimal of the f32: 1.07, not 1.0700000524520874).
void expect_short_floats(const json& want, const json& got, const std::string& path) {
    if (want.is_number_float() && got.is_number_float())
        BOOST_TEST(ck::support::python_float_repr(got.get<double>(), false).size() <=
                       ck::support::python_float_repr(want.get<double>(), false).size(),
                   path << ": " << got.get<double>());
    if (want.is_array() && got.is_array() && want.size() == got.size())
        for (std::size_t i = 0; i < want.size(); ++i)
            expect_short_floats(want[i], got[i], path + "[" + std::to_string(i) + "]");
    if (want.is_object() && got.is_object())
        for (auto it = want.begin(); it != want.end(); ++it)
            if (got.contains(it.key()))
                expect_short_floats(it.value(), got[it.key()], path + "." + it.key());
}

std::vector<std::byte> encoded(const ck::Value& v) {
    std::vector<std::byte> bytes;
    ckplugin::gguf::encode_gguf_value(v, bytes);
    return bytes;
}

// The same metadata (keys, order, types, values) and tensor directory.
void expect_same_header(const ck::ModelHeader& got, const ck::ModelHeader& want) {
    const auto& g = got.metadata.entries();
    const auto& w = want.metadata.entries();
    BOOST_TEST(g.size() == w.size());
    for (std::size_t i = 0; i < std::min(g.size(), w.size()); ++i) {
        BOOST_TEST(g[i].first == w[i].first, "key " << i);
        if (g[i].first != w[i].first) continue;
        BOOST_TEST(static_cast<int>(g[i].second.type()) == static_cast<int>(w[i].second.type()),
                   g[i].first);
        BOOST_TEST((encoded(g[i].second) == encoded(w[i].second)),
                   g[i].first << ": " << g[i].second.to_display() << ", the original's "
                              << w[i].second.to_display());
    }
    BOOST_TEST_REQUIRE(got.tensors.size() == want.tensors.size());
    for (std::size_t i = 0; i < got.tensors.size(); ++i) {
        BOOST_TEST(got.tensors[i].name == want.tensors[i].name);
        BOOST_TEST(got.tensors[i].type == want.tensors[i].type, got.tensors[i].name);
        BOOST_TEST((got.tensors[i].ne == want.tensors[i].ne), got.tensors[i].name);
    }
}

template <class Body>
void expect_error(Body body, const std::string& subject, const std::vector<std::string>& parts) {
    try {
        body();
        BOOST_ERROR("no error; expected one about " << subject);
    } catch (const ck::Error& e) {
        BOOST_TEST(e.subject() == subject, e.message());
        for (const std::string& p : parts)
            BOOST_TEST(cktest::contains(e.message(), p), "'" << p << "' not in: " << e.message());
    }
}

// `header` with `key` set to `value` (appended when new).
ck::ModelHeader with_key(ck::ModelHeader header, const std::string& key, ck::Value value) {
    header.metadata.set(key, std::move(value));
    return header;
}

ck::ModelHeader without_key(ck::ModelHeader header, const std::string& key) {
    header.metadata.erase(key);
    return header;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hf_export_config)

// Each checkpoint's header gives back its class and a config.json holding, for every key the
// converter reads (and each default the writer fills), the original's value.
BOOST_AUTO_TEST_CASE(every_key_the_converter_reads_comes_back,
                     *utf::precondition(CheckpointsPresent())) {
    for (const fs::path& folder : checkpoint_folders()) {
        BOOST_TEST_CONTEXT(folder.filename().string()) {
            cktest::TempDir dir;
            const Opened o = open_checkpoint(assemble(folder, dir));
            const json original = read_json(folder / "config.json");
            const auto target = ckplugin::hf::choose_export_target(o.header, "");
            BOOST_TEST(target.hf_class == original["architectures"][0].get<std::string>());
            const json config = export_of(o.header, o.generated);
            std::size_t compared = 0;
            for (const std::string& key : compared_keys(*target.architecture)) {
                if (!original.contains(key)) continue;
                const auto got = config.find(key);
                BOOST_TEST(
                    difference(original[key], got == config.end() ? nullptr : &*got, key).empty(),
                    difference(original[key], got == config.end() ? nullptr : &*got, key));
                ++compared;
            }
            BOOST_TEST(compared >= 15u);
            expect_short_floats(original, config, "");
            // rope_theta is a JSON integer exactly where the family writes one (Qwen3, Gemma 3).
            if (original.contains("rope_theta") && original["rope_theta"].is_number())
                BOOST_TEST(config["rope_theta"].is_number_integer() ==
                           original["rope_theta"].is_number_integer());
            // Valid JSON holding the same values (key order aside).
            BOOST_TEST(nlohmann::json::parse(ckplugin::hf::hf_json_text(config)) ==
                       nlohmann::json::parse(config.dump()));
        }
    }
}

// The exported config.json in place of the original: the reader gives the same metadata, keys
// in the same order with the same types and values, and the same tensors.
BOOST_AUTO_TEST_CASE(exported_config_reads_back_to_the_same_gguf,
                     *utf::precondition(CheckpointsPresent())) {
    for (const fs::path& folder : checkpoint_folders()) {
        BOOST_TEST_CONTEXT(folder.filename().string()) {
            cktest::TempDir original_dir, exported_dir;
            const Opened o = open_checkpoint(assemble(folder, original_dir));
            const std::string text = ckplugin::hf::hf_json_text(export_of(o.header, o.generated));
            const Opened again = open_checkpoint(assemble(folder, exported_dir, text));
            expect_same_header(again.header, o.header);
            // And again: the second export is the first, byte for byte.
            BOOST_TEST(ckplugin::hf::hf_json_text(export_of(again.header, again.generated)) ==
                       text);
        }
    }
}

// generation_config.json: the token ids of config.json, as save_pretrained writes them.
BOOST_AUTO_TEST_CASE(generation_config_has_the_token_ids,
                     *utf::precondition(CheckpointsPresent())) {
    for (const fs::path& folder : checkpoint_folders()) {
        BOOST_TEST_CONTEXT(folder.filename().string()) {
            cktest::TempDir dir;
            const Opened o = open_checkpoint(assemble(folder, dir));
            const json generation = ckplugin::hf::export_generation_config(o.header);
            const json original = read_json(folder / "config.json");
            BOOST_TEST(generation["_from_model_config"] == true);
            for (const char* id : {"bos_token_id", "eos_token_id"})
                BOOST_TEST(generation.value(id, json()) == original.value(id, json()), id);
            const json config = export_of(o.header, o.generated);
            for (auto it = generation.begin(); it != generation.end(); ++it)
                if (it.key() != "_from_model_config")
                    BOOST_TEST(config[it.key()] == it.value(), it.key());
        }
    }
}

// GGUF files of each checkpoint: the converter's own (every output type) and llama-quantize's
// Q4_K_M of them (tests/data/hf-arch-quant).
std::vector<fs::path> gguf_files_of(const fs::path& folder) {
    std::vector<fs::path> files;
    for (const fs::path& dir : {folder.parent_path(), cktest::test_data() / "hf-arch-quant"})
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.path().filename().string().starts_with(folder.filename().string() + ".") &&
                entry.path().extension() == ".gguf")
                files.push_back(entry.path());
    return files;
}

// Those files give the config the checkpoint's header does.
BOOST_AUTO_TEST_CASE(converter_files_give_the_same_config,
                     *utf::precondition(CheckpointsPresent())) {
    std::size_t quantized = 0;
    for (const fs::path& folder : checkpoint_folders()) {
        cktest::TempDir dir;
        const Opened o = open_checkpoint(assemble(folder, dir));
        const std::string want = ckplugin::hf::hf_json_text(export_of(o.header, o.generated));
        for (const fs::path& path : gguf_files_of(folder)) {
            BOOST_TEST_CONTEXT(path.filename().string()) {
                quantized += path.filename().string().ends_with(".q4_k_m.gguf");
                ck::RecordingContext context;
                ckplugin::gguf::GgufReader reader(context);
                const ck::ModelHeader header = reader.open(path);
                GeneratedValues generated;
                for (std::size_t i = 0; i < header.tensors.size(); ++i)
                    if (ckplugin::hf::is_generated_tensor(header.tensors[i].name))
                        take_generated(header.tensors[i].name,
                                       cktest::floats_of(reader.tensor(i).bytes()), generated);
                BOOST_TEST(ckplugin::hf::hf_json_text(export_of(header, generated)) == want);
            }
        }
    }
    BOOST_TEST(quantized >= 3u);
}

// A GGUF made by another tool (examples/micro-llama-q4_k_m.gguf): its keys go back as they are,
// unk_token_id with them; no head_dim or rope_scaling where it states none.
BOOST_AUTO_TEST_CASE(another_tools_gguf) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(cktest::sample_model());
    const json config = export_of(header, std::nullopt);
    const auto u32 = [&](const char* key) { return header.metadata.find(key)->as_uint().value(); };
    BOOST_TEST(config["architectures"] == json({"LlamaForCausalLM"}));
    BOOST_TEST(config["vocab_size"] == u32("llama.vocab_size"));
    BOOST_TEST(config["num_hidden_layers"] == u32("llama.block_count"));
    BOOST_TEST(config["intermediate_size"] == u32("llama.feed_forward_length"));
    BOOST_TEST(config["unk_token_id"] == u32("tokenizer.ggml.unknown_token_id"));
    BOOST_TEST(static_cast<float>(config["rms_norm_eps"].get<double>()) ==
               *header.metadata.find("llama.attention.layer_norm_rms_epsilon")->as_f32());
    BOOST_TEST(!config.contains("head_dim"));
    BOOST_TEST(config["rope_scaling"].is_null());
    BOOST_TEST(config["pad_token_id"].is_null());
}

// Without the generated values (the writer's prepare()), every check is made and rope_scaling
// has its type alone.
BOOST_AUTO_TEST_CASE(without_generated_values_the_type_alone, *utf::precondition(ArchPresent())) {
    for (const char* name : {"llama31-bf16", "phi3-longrope-bf16"}) {
        BOOST_TEST_CONTEXT(name) {
            cktest::TempDir dir;
            const Opened o = open_checkpoint(assemble(*arch_folder(name), dir));
            const json original = read_json(*arch_folder(name) / "config.json");
            const json config = export_of(o.header, std::nullopt);
            const json& want = original["rope_scaling"];
            const char* type = want.contains("rope_type") ? "rope_type" : "type";
            BOOST_TEST(config["rope_scaling"] == json({{type, want[type]}}));
        }
    }
}

// Llama 3's factors over more shapes: made by the reader's llama3_rope_factors, recovered to
// the same parameters; another grid point gives its own values back; a tensor no parameters
// make is refused naming it.
BOOST_AUTO_TEST_CASE(llama3_rope_recovered_over_shapes) {
    for (const double base : {10000.0, 500000.0})
        for (const std::uint32_t dim : {64u, 128u})
            for (const double factor : {8.0, 32.0}) {
                BOOST_TEST_CONTEXT(base << " " << dim << " " << factor) {
                    ckplugin::hf::Llama3Rope made;
                    made.base = base;
                    made.factor = factor;
                    const auto values = ckplugin::hf::llama3_rope_factors(made, dim);
                    const auto got =
                        ckplugin::hf::recover_llama3_rope(values, static_cast<float>(base), dim);
                    BOOST_TEST_REQUIRE(got.has_value());
                    BOOST_TEST(got->factor == factor);
                    BOOST_TEST(got->low_freq_factor == 1.0);
                    BOOST_TEST(got->high_freq_factor == 4.0);
                    BOOST_TEST(got->original_context == 8192.0);
                    ckplugin::hf::Llama3Rope other = made;
                    other.low_freq_factor = 2;
                    other.high_freq_factor = 8;
                    other.original_context = 4096;
                    const auto other_values = ckplugin::hf::llama3_rope_factors(other, dim);
                    const auto back = ckplugin::hf::recover_llama3_rope(
                        other_values, static_cast<float>(base), dim);
                    BOOST_TEST_REQUIRE(back.has_value());
                    BOOST_TEST((ckplugin::hf::llama3_rope_factors(*back, dim) == other_values));
                    auto nudged = values;
                    nudged[nudged.size() / 2] = std::nextafter(nudged[nudged.size() / 2], 100.0f);
                    BOOST_TEST(
                        !ckplugin::hf::recover_llama3_rope(nudged, static_cast<float>(base), dim)
                             .has_value());
                }
            }
}

BOOST_AUTO_TEST_CASE(rope_freqs_no_parameters_make_is_refused, *utf::precondition(ArchPresent())) {
    cktest::TempDir dir;
    Opened o = open_checkpoint(assemble(*arch_folder("llama31-bf16"), dir));
    auto& freqs = o.generated.rope_freqs;
    BOOST_TEST_REQUIRE(freqs.size() == 8u);
    freqs[4] = std::nextafter(freqs[4], 100.0f);
    expect_error([&] { export_of(o.header, o.generated); }, "tensor 'rope_freqs.weight'",
                 {"matches no llama3 rope_scaling"});
    freqs.pop_back();
    expect_error([&] { export_of(o.header, o.generated); }, "tensor 'rope_freqs.weight'",
                 {"was read with 7 values"});
}

// Linear and yarn scaling keys go back to rope_scaling, and the reader writes them again.
BOOST_AUTO_TEST_CASE(linear_and_yarn_keys_come_back, *utf::precondition(CheckpointsPresent())) {
    const fs::path folder = *cktest::shared_data() / "hf" / "llama-bf16";
    if (!fs::is_directory(folder)) return;
    cktest::TempDir dir;
    const Opened o = open_checkpoint(assemble(folder, dir));
    ck::ModelHeader linear =
        with_key(o.header, "llama.rope.scaling.type", ck::Value::of_string("linear"));
    linear = with_key(linear, "llama.rope.scaling.factor", ck::Value::of_f32(2.5f));
    ck::ModelHeader yarn =
        with_key(o.header, "llama.rope.scaling.type", ck::Value::of_string("yarn"));
    yarn = with_key(yarn, "llama.rope.scaling.factor", ck::Value::of_f32(4.0f));
    yarn = with_key(yarn, "llama.rope.scaling.original_context_length", ck::Value::of_u32(128));
    yarn = with_key(yarn, "llama.rope.scaling.yarn_beta_fast", ck::Value::of_f32(32.0f));
    yarn = with_key(yarn, "llama.rope.scaling.yarn_attn_factor", ck::Value::of_f32(0.7f));
    for (const ck::ModelHeader* header : {&linear, &yarn}) {
        const json config = export_of(*header, o.generated);
        const std::string type = header->metadata.find("llama.rope.scaling.type")->str();
        BOOST_TEST_CONTEXT(type) {
            BOOST_TEST(config["rope_scaling"]["rope_type"] == type);
            cktest::TempDir out;
            const Opened again =
                open_checkpoint(assemble(folder, out, ckplugin::hf::hf_json_text(config)));
            for (const auto& [key, value] : header->metadata)
                if (key.starts_with("llama.rope.scaling."))
                    BOOST_TEST((encoded(*again.header.metadata.find(key)) == encoded(value)), key);
        }
    }
    BOOST_TEST(export_of(yarn, o.generated)["rope_scaling"]["attention_factor"].dump() == "0.7");
    expect_error(
        [&] {
            export_of(
                with_key(o.header, "llama.rope.scaling.type", ck::Value::of_string("longrope")),
                o.generated);
        },
        "key 'llama.rope.scaling.type'", {"long and short factors"});
}

// Phi-3's rotary dimensions below the head size become partial_rotary_factor, which the reader
// turns into the same dimensions; Gemma 3 without a window makes every layer global.
BOOST_AUTO_TEST_CASE(partial_rotary_and_no_window_come_back, *utf::precondition(ArchPresent())) {
    struct Case {
        const char* folder;
        const char* key;
        std::optional<std::uint32_t> value;  // nullopt: the key removed
    };
    for (const Case& c : {Case{"phi3-bf16", "phi3.rope.dimension_count", 8},
                          Case{"gemma3-bf16", "gemma3.attention.sliding_window", std::nullopt}}) {
        const auto folder = arch_folder(c.folder);
        if (!folder) continue;
        BOOST_TEST_CONTEXT(c.folder) {
            cktest::TempDir dir, out;
            const Opened o = open_checkpoint(assemble(*folder, dir));
            const ck::ModelHeader header =
                c.value ? with_key(o.header, c.key, ck::Value::of_u32(*c.value))
                        : without_key(o.header, c.key);
            const json config = export_of(header, o.generated);
            if (c.value) BOOST_TEST(config["partial_rotary_factor"] == 0.5);
            if (!c.value) BOOST_TEST(config["sliding_window_pattern"] == 1);
            const Opened again =
                open_checkpoint(assemble(*folder, out, ckplugin::hf::hf_json_text(config)));
            expect_same_header(again.header, header);
        }
    }
}

BOOST_AUTO_TEST_CASE(refusals, *utf::precondition(ArchPresent())) {
    cktest::TempDir dir, nemo_dir;
    const Opened o = open_checkpoint(assemble(*arch_folder("llama31-bf16"), dir));
    expect_error(
        [&] {
            export_of(with_key(o.header, "general.architecture", ck::Value::of_string("gpt2")),
                      o.generated);
        },
        "key 'general.architecture'", {"'gpt2'", "llama (LlamaForCausalLM", "gemma3"});
    expect_error([&] { export_of(without_key(o.header, "general.architecture"), o.generated); },
                 "key 'general.architecture'", {"missing"});
    expect_error([&] { export_of(o.header, o.generated, "Qwen3ForCausalLM"); },
                 "key 'general.architecture'",
                 {"Qwen3ForCausalLM", "LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM"});
    expect_error([&] { export_of(o.header, o.generated, "MixtralForCausalLM"); },
                 "key 'llama.expert_count'", {"mixture of experts"});
    expect_error(
        [&] {
            export_of(with_key(o.header, "llama.block_count", ck::Value::of_string("2")),
                      o.generated);
        },
        "key 'llama.block_count'", {"not an integer"});
    expect_error([&] { export_of(without_key(o.header, "llama.block_count"), o.generated); },
                 "key 'llama.block_count'", {"missing"});
    expect_error(
        [&] {
            export_of(
                with_key(o.header, "llama.attention.layer_norm_rms_epsilon", ck::Value::of_u32(1)),
                o.generated);
        },
        "key 'llama.attention.layer_norm_rms_epsilon'", {"not a float"});
    expect_error(
        [&] {
            export_of(with_key(o.header, "llama.rope.freq_base",
                               ck::Value::of_f32(std::numeric_limits<float>::infinity())),
                      o.generated);
        },
        "key 'llama.rope.freq_base'", {"finite"});
    expect_error(
        [&] {
            export_of(with_key(o.header, "llama.vocab_size", ck::Value::of_u32(513)), o.generated);
        },
        "key 'llama.vocab_size'", {"513", "token_embd.weight's rows"});
    expect_error(
        [&] {
            export_of(with_key(o.header, "llama.rope.dimension_count", ck::Value::of_u32(8)),
                      o.generated);
        },
        "key 'llama.rope.dimension_count'", {"rotates whole heads"});
    expect_error(
        [&] {
            export_of(with_key(o.header, "llama.rope.scaling.type", ck::Value::of_string("linear")),
                      o.generated);
        },
        "key 'llama.rope.scaling.type'", {"rope_freqs.weight"});
    const Opened nemo = open_checkpoint(assemble(*arch_folder("mistral-nemo-bf16"), nemo_dir));
    expect_error(
        [&] {
            export_of(with_key(nemo.header, "llama.attention.value_length", ck::Value::of_u32(64)),
                      nemo.generated);
        },
        "key 'llama.attention.value_length'", {"64", "key_length is 32", "one head_dim"});
    expect_error(
        [&] {
            ck::ModelHeader h = o.header;
            std::erase_if(h.tensors, [](const auto& t) { return t.name == "token_embd.weight"; });
            export_of(h, o.generated);
        },
        "tensor 'token_embd.weight'", {"vocab_size"});
}

// Classes: Mistral by name, Mixtral by experts, a class asked for within the family; every
// class of every family has a config.json description.
BOOST_AUTO_TEST_CASE(class_choice, *utf::precondition(ArchPresent())) {
    cktest::TempDir dir;
    const Opened o = open_checkpoint(assemble(*arch_folder("llama31-bf16"), dir));
    BOOST_TEST(ckplugin::hf::choose_export_target(o.header, "").hf_class == "LlamaForCausalLM");
    const auto named = with_key(o.header, "general.name", ck::Value::of_string("My MISTRAL tune"));
    BOOST_TEST(ckplugin::hf::choose_export_target(named, "").hf_class == "MistralForCausalLM");
    BOOST_TEST(ckplugin::hf::choose_export_target(named, "").model_type == "mistral");
    BOOST_TEST(ckplugin::hf::choose_export_target(named, "LlamaForCausalLM").hf_class ==
               "LlamaForCausalLM");
    expect_error(
        [&] {
            ckplugin::hf::choose_export_target(
                with_key(o.header, "general.name", ck::Value::of_u32(3)), "");
        },
        "key 'general.name'", {"not text"});
    for (const char* arch : {"llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3"}) {
        const auto* a = ckplugin::hf::find_architecture_by_arch(arch);
        BOOST_TEST_REQUIRE(a != nullptr, arch);
        ck::ModelHeader h;
        h.metadata.set("general.architecture", ck::Value::of_string(arch));
        for (std::string_view c : a->classes) {
            const bool moe = c == "MixtralForCausalLM" || c == "Qwen3MoeForCausalLM";
            h.metadata.set(std::string(arch) + ".expert_count", ck::Value::of_u32(moe ? 4 : 0));
            BOOST_TEST(ckplugin::hf::choose_export_target(h, c).hf_class == c);
        }
    }
}

// json.dumps(config, indent=2, sort_keys=True) + "\n": each hf-arch config.json (written so)
// comes out byte for byte; floats as Python's repr; strings escaped as ensure_ascii does.
BOOST_AUTO_TEST_CASE(json_text_is_save_pretrained_s, *utf::precondition(CheckpointsPresent())) {
    std::size_t checked = 0;
    for (const fs::path& folder : checkpoint_folders()) {
        if (folder.parent_path().filename() != "hf-arch") continue;
        BOOST_TEST_CONTEXT(folder.filename().string()) {
            const std::string text = read_text(folder / "config.json");
            BOOST_TEST(ckplugin::hf::hf_json_text(json::parse(text)) == text);
            ++checked;
        }
    }
    BOOST_TEST(checked > 0u);
}

BOOST_AUTO_TEST_CASE(json_text_numbers_and_strings) {
    using ckplugin::hf::hf_json_text;
    using ckplugin::hf::json_f32;
    BOOST_TEST(hf_json_text(json::object()) == "{}\n");
    BOOST_TEST(hf_json_text(json{{"b", json::array()}, {"a", 1}}) ==
               "{\n  \"a\": 1,\n  \"b\": []\n}\n");
    BOOST_TEST(hf_json_text(json_f32(1e-6f)) == "1e-06\n");
    BOOST_TEST(hf_json_text(json_f32(1e-5f)) == "1e-05\n");
    BOOST_TEST(hf_json_text(json_f32(500000.0f)) == "500000.0\n");
    BOOST_TEST(hf_json_text(json_f32(1000000.0f, true)) == "1000000\n");
    BOOST_TEST(hf_json_text(json_f32(1.07f)) == "1.07\n");
    BOOST_TEST(hf_json_text(json_f32(1.85f)) == "1.85\n");
    BOOST_TEST(hf_json_text(json_f32(0.1f)) == "0.1\n");
    BOOST_TEST(hf_json_text(json_f32(1e20f)) == "1e+20\n");
    BOOST_TEST(hf_json_text(json_f32(-0.0f)) == "-0.0\n");
    // Every float reads back (JSON -> double -> float) to itself, over a sweep of bit patterns.
    for (std::uint32_t bits = 0x00800000; bits < 0x7f000000; bits += 0x00123457) {
        float f;
        std::memcpy(&f, &bits, 4);
        const std::string text = hf_json_text(json_f32(f));
        BOOST_TEST(static_cast<float>(std::strtod(text.c_str(), nullptr)) == f, text);
    }
    BOOST_TEST(hf_json_text(json("caf\xc3\xa9 \xf0\x9f\xa6\x99\x01\"")) ==
               "\"caf\\u00e9 \\ud83e\\udd99\\u0001\\\"\"\n");
    BOOST_TEST(hf_json_text(json("caf\xc3\xa9"), false) == "\"caf\xc3\xa9\"\n");
    BOOST_CHECK_THROW(hf_json_text(json(std::nan(""))), ck::Error);
}

BOOST_AUTO_TEST_CASE(generated_tensor_names) {
    for (const char* name :
         {"rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight"})
        BOOST_TEST(ckplugin::hf::is_generated_tensor(name), name);
    for (const char* name : {"token_embd.weight", "rope_freqs", "blk.0.rope_freqs.weight"})
        BOOST_TEST(!ckplugin::hf::is_generated_tensor(name), name);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_hf_export_config
