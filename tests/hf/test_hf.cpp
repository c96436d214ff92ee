// The hf reader against llama.cpp's converter: the checkpoint in ../shared/testdata/hf through
// every output type gives the converter's GGUF files byte for byte; the same checkpoint split
// into shards (made here from the public one) gives the same file; a tied model; and the
// broken checkpoints, each refused with its exit code, a message naming the problem and
// nothing left behind.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "checkpoint_files.hpp"
#include "ck/context.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_hf {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using json = nlohmann::ordered_json;

namespace {

std::optional<fs::path> hf_data() {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_directory(*shared / "hf" / "llama-bf16")) return std::nullopt;
    return *shared / "hf";
}

struct HfDataPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(hf_data().has_value());
        ok.message() << "../shared/testdata/hf/llama-bf16 is absent: skipping the hf golden tests";
        return ok;
    }
};

fs::path checkpoint() {
    return *hf_data() / "llama-bf16";
}

using cktest::hf::convert;
using cktest::hf::edit_config;
using cktest::hf::expect_refused;
using cktest::hf::read_safetensors;
using cktest::hf::Safetensors;
using cktest::hf::string_key;
using cktest::hf::write_shard;

// A copy of the public checkpoint in `folder` (named llama-bf16, as general.name comes from
// it) with its tensors spread over `shards` files listed by an index; `edit_index` may change
// the index, `drop` leaves tensors out.
fs::path make_checkpoint(const cktest::TempDir& dir, std::size_t shards,
                         const std::vector<std::string>& drop = {},
                         const std::function<void(json&)>& edit_index = {}) {
    const fs::path folder = dir / "llama-bf16";
    fs::create_directories(folder);
    for (const char* name : {"config.json", "tokenizer.model", "tokenizer_config.json"}) {
        fs::copy_file(checkpoint() / name, folder / name);
        fs::permissions(folder / name, fs::perms::owner_write, fs::perm_options::add);
    }
    const Safetensors source = read_safetensors(checkpoint() / "model.safetensors");
    std::vector<std::string> names;
    for (const auto& item : source.header.items())
        if (item.key() != "__metadata__" &&
            std::find(drop.begin(), drop.end(), item.key()) == drop.end())
            names.push_back(item.key());
    if (shards == 1) {
        write_shard(folder / "model.safetensors", source, names);
        return folder;
    }
    json index = {{"metadata", {{"total_size", source.data.size()}}},
                  {"weight_map", json::object()}};
    // Contiguous runs of the names in sorted order, as Hugging Face fills one shard after
    // another: the converter then visits the tensors in the single file's order.
    std::sort(names.begin(), names.end());
    const std::size_t per_shard = (names.size() + shards - 1) / shards;
    for (std::size_t s = 0; s < shards; ++s) {
        char file[64];
        std::snprintf(file, sizeof file, "model-%05zu-of-%05zu.safetensors", s + 1, shards);
        std::vector<std::string> part;
        for (std::size_t i = s * per_shard; i < std::min(names.size(), (s + 1) * per_shard); ++i) {
            part.push_back(names[i]);
            index["weight_map"][names[i]] = file;
        }
        write_shard(folder / file, source, part);
    }
    if (edit_index) edit_index(index);
    std::ofstream(folder / "model.safetensors.index.json") << index.dump(2);
    return folder;
}

// hf:gguf of `folder` into `out`; the output's metadata.
ck::Metadata converted_metadata(const fs::path& folder, const cktest::TempDir& out) {
    const auto r = convert("hf:gguf", folder, out / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    return reader.open(out / "m.gguf").metadata;
}

// hf:gguf of `folder` into `out`: the run (for its warnings) and the output's metadata.
std::pair<cktest::RunResult, ck::Metadata> converted(const fs::path& folder,
                                                     const cktest::TempDir& out) {
    auto r = convert("hf:gguf", folder, out / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    return {std::move(r), reader.open(out / "m.gguf").metadata};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

// A chat template with what a real one has: Jinja tags, line ends, non-ASCII text, a final
// newline.
const std::string jinja_text =
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}"
    "</s>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    "{# r\xc3\xa9ponse \xe2\x80\x94 \xe5\x9b\x9e\xe7\xad\x94 #}\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(hf)

// Each output type against the converter's file of it (--outtype bf16, f16, f32, q8_0).
BOOST_AUTO_TEST_CASE(each_outtype_is_the_converters_file, *utf::precondition(HfDataPresent())) {
    const std::pair<const char*, const char*> cases[] = {
        {"hf:gguf", "llama-bf16.bf16.gguf"},
        {"hf:dequant[to=f16]:gguf", "llama-bf16.f16.gguf"},
        {"hf:dequant[to=f32]:gguf", "llama-bf16.f32.gguf"},
        {"hf:quantize[to=q8_0]:gguf", "llama-bf16.q8_0.gguf"},
    };
    cktest::TempDir out;
    for (const auto& c : cases) {
        const fs::path target = out / c.second;
        const auto r = convert(c.first, checkpoint(), target);
        BOOST_TEST_REQUIRE(r.exit_code == 0, c.first << ": " << r.err);
        BOOST_TEST(cktest::files_equal(target, *hf_data() / c.second), c.first);
    }
}

BOOST_AUTO_TEST_CASE(config_json_names_the_checkpoint_too, *utf::precondition(HfDataPresent())) {
    cktest::TempDir out;
    const auto r = convert("hf:gguf", checkpoint() / "config.json", out / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(out / "m.gguf", *hf_data() / "llama-bf16.bf16.gguf"));
}

BOOST_AUTO_TEST_CASE(inspect_recognises_a_config_json, *utf::precondition(HfDataPresent())) {
    const auto r = cktest::run_ckhost({"inspect", (checkpoint() / "config.json").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, ": hf"), r.out);
    BOOST_TEST(contains(r.out, "LlamaForCausalLM"), r.out);
}

BOOST_AUTO_TEST_CASE(verify_checks_every_shard, *utf::precondition(HfDataPresent())) {
    const auto r = cktest::run_ckhost({"verify", (checkpoint() / "config.json").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "OK (hf, 21 tensors)"), r.out);
}

// C-Kernel-Engine's path with no GGUF in between gives what it gives from the converter's
// BF16 GGUF.
BOOST_AUTO_TEST_CASE(straight_to_bump_as_through_the_converters_gguf,
                     *utf::precondition(HfDataPresent())) {
    cktest::TempDir out;
    const std::string pipeline = "quantize[mix=q4_k_m]:headpack:bump";
    auto r = convert("hf:" + pipeline, checkpoint(), out / "direct/");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    r = convert("gguf:" + pipeline, *hf_data() / "llama-bf16.bf16.gguf", out / "via-gguf/");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    for (const char* file : {"weights.bump", "config.json"})
        BOOST_TEST(cktest::files_equal(out / "direct" / file, out / "via-gguf" / file), file);
}

// Shards through model.safetensors.index.json give the same file as one model.safetensors.
BOOST_AUTO_TEST_CASE(sharded_checkpoint_gives_the_same_file, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 3);
    BOOST_TEST_REQUIRE(fs::exists(folder / "model-00003-of-00003.safetensors"));
    const auto r = convert("hf:gguf", folder, out / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(out / "m.gguf", *hf_data() / "llama-bf16.bf16.gguf"));
}

// Tied embeddings: no lm_head.weight, so no output.weight (llama.cpp then uses token_embd);
// everything else as in the untied file.
BOOST_AUTO_TEST_CASE(tied_model_has_no_output_tensor, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1, {"lm_head.weight"});
    edit_config(folder, [](json& c) { c["tie_word_embeddings"] = true; });
    const auto r = convert("hf:gguf", folder, out / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);

    ck::RecordingContext context;
    ckplugin::gguf::GgufReader tied(context), untied(context);
    const ck::ModelHeader got = tied.open(out / "m.gguf");
    const ck::ModelHeader want = untied.open(*hf_data() / "llama-bf16.bf16.gguf");
    BOOST_TEST(!got.find_tensor("output.weight"));
    BOOST_TEST(got.tensors.size() + 1 == want.tensors.size());
    for (std::size_t i = 0; i < got.tensors.size(); ++i) {
        const std::string& name = got.tensors[i].name;
        const auto* w = want.find_tensor(name);
        BOOST_TEST_REQUIRE(w, name);
        const auto a = tied.tensor(i).bytes();
        const auto b = untied.tensor(static_cast<std::size_t>(w - want.tensors.data())).bytes();
        BOOST_TEST((a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0), name);
    }
    // 2086144 parameters less the 256000 of lm_head.
    BOOST_TEST(got.metadata.find("general.size_label")->str() == "1.8M");
}

// config.json's linear rope scaling and tokenizer_config.json's added tokens, as the converter
// writes them.
BOOST_AUTO_TEST_CASE(rope_scaling_and_added_tokens, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    edit_config(folder, [](json& c) {
        c["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
        c["_name_or_path"] = "some-org/tiny-llama-v1.0";
    });
    std::ofstream(folder / "tokenizer_config.json") << json{
        {"add_bos_token", true},
        {"added_tokens_decoder",
         {{"999", {{"content", "<|im_end|>"}, {"special", true}}},
          {"998", {{"content", "\xe2\x96\x81hi"}, {"special", false}}}}},
        {"chat_template", "{{ messages }}"}}.dump();
    const ck::Metadata md = converted_metadata(folder, out);
    BOOST_TEST(md.find("general.name")->str() == "Tiny Llama v1.0");  // from _name_or_path
    BOOST_TEST(md.find("llama.rope.scaling.type")->str() == "linear");
    BOOST_TEST(*md.find("llama.rope.scaling.factor")->as_f32() == 4.0f);
    const ck::ArrayValue& tokens = md.find("tokenizer.ggml.tokens")->array();
    const ck::ArrayValue& types = md.find("tokenizer.ggml.token_type")->array();
    const ck::ArrayValue& scores = md.find("tokenizer.ggml.scores")->array();
    BOOST_TEST(tokens.string_at(999) == "<|im_end|>");
    BOOST_TEST(types.raw_at(999) == 3u);  // CONTROL
    BOOST_TEST(scores.raw_at(999) == std::bit_cast<std::uint32_t>(-1000.0f));
    BOOST_TEST(tokens.string_at(998) == " hi");
    BOOST_TEST(types.raw_at(998) == 4u);  // USER_DEFINED
    BOOST_TEST(md.find("tokenizer.chat_template")->str() == "{{ messages }}");
    BOOST_TEST(!md.contains("tokenizer.ggml.add_eos_token"));
}

BOOST_AUTO_TEST_CASE(missing_shard_is_refused, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = make_checkpoint(dir, 2);
    fs::remove(folder / "model-00002-of-00002.safetensors");
    expect_refused(folder,
                   {"model.safetensors.index.json", "model-00002-of-00002.safetensors", "missing"});
}

BOOST_AUTO_TEST_CASE(shard_disagreeing_with_the_index_is_refused,
                     *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    // The index moves a tensor of shard 1 (the first name in sorted order) to shard 2.
    const fs::path folder = make_checkpoint(dir, 2, {}, [](json& index) {
        index["weight_map"]["lm_head.weight"] = "model-00002-of-00002.safetensors";
    });
    expect_refused(folder, {"model-00001-of-00002.safetensors", "lm_head.weight",
                            "the index puts in 'model-00002-of-00002.safetensors'"});
}

BOOST_AUTO_TEST_CASE(index_listing_a_tensor_no_shard_holds_is_refused,
                     *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = make_checkpoint(dir, 2, {}, [](json& index) {
        index["weight_map"]["model.layers.9.mlp.up_proj.weight"] =
            "model-00001-of-00002.safetensors";
    });
    expect_refused(folder, {"model.layers.9.mlp.up_proj.weight", "does not hold it"});
}

BOOST_AUTO_TEST_CASE(unknown_architecture_is_refused, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = make_checkpoint(dir, 1);
    edit_config(folder, [](json& c) { c["architectures"] = {"GPT2LMHeadModel"}; });
    expect_refused(folder, {"config.json", "architecture 'GPT2LMHeadModel' is not supported",
                            "LlamaForCausalLM"});
}

BOOST_AUTO_TEST_CASE(tensor_without_a_llama_name_is_refused, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = make_checkpoint(dir, 1);
    edit_config(folder, [](json& c) { c["num_hidden_layers"] = 1; });  // layer 1 is then extra
    expect_refused(folder, {"model.layers.1.", "has no llama.cpp name"});
}

// A byte-level BPE tokenizer.json (Llama 3's pre-tokenizer) in place of tokenizer.model: the
// converter's rules (get_vocab_base, SpecialVocab with merges), checked key by key.
json bpe_tokenizer(const json& pre_tokenizer) {
    json vocab = json::object();
    for (int i = 0; i < 997; ++i)
        if (i != 5) vocab["t" + std::to_string(i)] = i;  // id 5 missing: a [PAD5]
    return {
        {"version", "1.0"},
        {"added_tokens",
         {{{"id", 998}, {"content", "<|begin_of_text|>"}, {"special", true}},
          {{"id", 999}, {"content", "\xe2\x96\x81user"}, {"special", false}},
          {{"id", 997}, {"content", "<|reserved|>"}, {"special", false}}}},
        {"pre_tokenizer", pre_tokenizer},
        {"post_processor",
         {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}}},
        {"model",
         {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"t1 t2", json::array({"t 3", "t4"})}}}}};
}

const json llama3_pre_tokenizer = {
    {"type", "Sequence"},
    {"pretokenizers",
     {{{"type", "Split"},
       {"pattern",
        {{"Regex",
          R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
       {"behavior", "Isolated"},
       {"invert", false}},
      {{"type", "ByteLevel"},
       {"add_prefix_space", false},
       {"trim_offsets", true},
       {"use_regex", false}}}}};

fs::path make_bpe_checkpoint(const cktest::TempDir& dir, const json& pre_tokenizer) {
    const fs::path folder = make_checkpoint(dir, 1);
    fs::remove(folder / "tokenizer.model");
    std::ofstream(folder / "tokenizer.json") << bpe_tokenizer(pre_tokenizer).dump();
    std::ofstream(folder / "tokenizer_config.json")
        << json{{"bos_token", "<|begin_of_text|>"}, {"eos_token", "<|reserved|>"}}.dump();
    return folder;
}

BOOST_AUTO_TEST_CASE(bpe_tokenizer_json, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_bpe_checkpoint(dir, llama3_pre_tokenizer);
    const ck::Metadata md = converted_metadata(folder, out);
    BOOST_TEST(md.find("tokenizer.ggml.model")->str() == "gpt2");
    BOOST_TEST(md.find("tokenizer.ggml.pre")->str() == "llama-bpe");
    BOOST_TEST(!md.contains("tokenizer.ggml.scores"));
    const ck::ArrayValue& tokens = md.find("tokenizer.ggml.tokens")->array();
    const ck::ArrayValue& types = md.find("tokenizer.ggml.token_type")->array();
    BOOST_TEST_REQUIRE(tokens.size() == 1000u);
    BOOST_TEST(tokens.string_at(5) == "[PAD5]");
    BOOST_TEST(types.raw_at(5) == 5u);  // UNUSED
    BOOST_TEST(tokens.string_at(4) == "t4");
    BOOST_TEST(types.raw_at(4) == 1u);             // NORMAL
    BOOST_TEST(types.raw_at(998) == 3u);           // CONTROL: special
    BOOST_TEST(types.raw_at(997) == 3u);           // CONTROL: looks special
    BOOST_TEST(tokens.string_at(999) == " user");  // user-defined, U+2581 -> space
    BOOST_TEST(types.raw_at(999) == 4u);
    const ck::ArrayValue& merges = md.find("tokenizer.ggml.merges")->array();
    BOOST_TEST_REQUIRE(merges.size() == 2u);
    BOOST_TEST(merges.string_at(0) == "t1 t2");
    BOOST_TEST(merges.string_at(1) ==
               "t\xc4\xa0"
               "3 t4");  // a space inside a pair part: U+0120
    BOOST_TEST(md.find("tokenizer.ggml.bos_token_id")->raw() == 998u);
    BOOST_TEST(md.find("tokenizer.ggml.eos_token_id")->raw() == 997u);
    BOOST_TEST(md.find("tokenizer.ggml.add_bos_token")->raw() == 1u);  // from the template
}

BOOST_AUTO_TEST_CASE(unknown_pre_tokenizer_is_refused, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = make_bpe_checkpoint(
        dir, {{"type", "Metaspace"}, {"replacement", "\xe2\x96\x81"}, {"prepend_scheme", "first"}});
    expect_refused(folder, {"tokenizer.json", "unknown pre-tokenizer", "Metaspace", "llama-bpe"});
}

// qwen2: the same tensors without the rotary permutation, qwen2.* keys without vocab_size and
// rope.dimension_count.
BOOST_AUTO_TEST_CASE(qwen2_keeps_the_rows_as_they_are, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    edit_config(folder, [](json& c) {
        c["architectures"] = {"Qwen2ForCausalLM"};
        c["model_type"] = "qwen2";
    });
    const auto r = convert("hf:gguf", folder, out / "m.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader h = reader.open(out / "m.gguf");
    BOOST_TEST(h.metadata.find("general.architecture")->str() == "qwen2");
    BOOST_TEST(h.metadata.find("qwen2.block_count")->raw() == 2u);
    BOOST_TEST(!h.metadata.contains("qwen2.vocab_size"));
    BOOST_TEST(!h.metadata.contains("qwen2.rope.dimension_count"));
    const Safetensors source = read_safetensors(checkpoint() / "model.safetensors");
    for (const char* pair : {"blk.0.attn_q.weight=model.layers.0.self_attn.q_proj.weight",
                             "blk.1.attn_k.weight=model.layers.1.self_attn.k_proj.weight"}) {
        const std::string spec(pair), name = spec.substr(0, spec.find('=')),
                                      hf_name = spec.substr(spec.find('=') + 1);
        const auto* t = h.find_tensor(name);
        BOOST_TEST_REQUIRE(t, name);
        const auto got = reader.tensor(static_cast<std::size_t>(t - h.tensors.data())).bytes();
        const auto begin = source.header[hf_name]["data_offsets"][0].get<std::size_t>();
        BOOST_TEST(std::memcmp(got.data(), source.data.data() + begin, got.size()) == 0, name);
    }
}

BOOST_AUTO_TEST_CASE(folder_without_weights_is_refused, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = make_checkpoint(dir, 1);
    fs::remove(folder / "model.safetensors");
    expect_refused(folder, {"no model.safetensors or model.safetensors.index.json"});
}

// chat_template.jinja (where transformers saves the template now) becomes
// tokenizer.chat_template, its text exactly as the file has it.
BOOST_AUTO_TEST_CASE(chat_template_jinja_is_read, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    write_bytes(folder / "chat_template.jinja", jinja_text);
    const auto [run, md] = converted(folder, out);
    const std::vector<unsigned char> file = cktest::read_file(folder / "chat_template.jinja");
    BOOST_TEST(string_key(md, "tokenizer.chat_template") == std::string(file.begin(), file.end()));
    BOOST_TEST(!contains(run.err, "chat_template"), run.err);
}

// Read as the converter's Python reads text: "\r\n" and a lone "\r" become "\n".
BOOST_AUTO_TEST_CASE(chat_template_jinja_line_ends_as_python_reads_them,
                     *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    write_bytes(folder / "chat_template.jinja", "{{ a }}\r\n{{ b }}\r{{ c }}\n\r\n");
    const auto [run, md] = converted(folder, out);
    BOOST_TEST(string_key(md, "tokenizer.chat_template") == "{{ a }}\n{{ b }}\n{{ c }}\n\n");
}

// Both present: tokenizer_config.json's chat_template wins (gguf-py's SpecialVocab), and the
// unused file is named in a warning.
BOOST_AUTO_TEST_CASE(tokenizer_config_template_wins_over_the_jinja_file,
                     *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    json config = json::parse(std::ifstream(folder / "tokenizer_config.json"));
    config["chat_template"] = "{{ from_the_config }}";
    std::ofstream(folder / "tokenizer_config.json") << config.dump(2);
    write_bytes(folder / "chat_template.jinja", jinja_text);
    const auto [run, md] = converted(folder, out);
    BOOST_TEST(string_key(md, "tokenizer.chat_template") == "{{ from_the_config }}");
    BOOST_TEST(contains(run.err, "chat_template.jinja"), run.err);
    BOOST_TEST(contains(run.err, "tokenizer_config.json has its own chat_template"), run.err);

    // The same text in both: nothing is lost, nothing to say.
    cktest::TempDir out2;
    write_bytes(folder / "chat_template.jinja", "{{ from_the_config }}");
    const auto [same, md2] = converted(folder, out2);
    BOOST_TEST(!contains(same.err, "chat_template"), same.err);
}

// Without tokenizer_config.json the converter reads no template: neither do we, but the file
// is named in a warning instead of being dropped silently.
BOOST_AUTO_TEST_CASE(jinja_without_tokenizer_config_is_named, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    fs::remove(folder / "tokenizer_config.json");
    write_bytes(folder / "chat_template.jinja", jinja_text);
    const auto [run, md] = converted(folder, out);
    BOOST_TEST(!md.contains("tokenizer.chat_template"));
    BOOST_TEST(contains(run.err, "warning"), run.err);
    BOOST_TEST(contains(run.err, (folder / "chat_template.jinja").string()), run.err);
    BOOST_TEST(contains(run.err, "not used"), run.err);
}

// A template file that is not UTF-8 text is refused (the converter fails on it too).
BOOST_AUTO_TEST_CASE(jinja_that_is_not_utf8_is_refused, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = make_checkpoint(dir, 1);
    write_bytes(folder / "chat_template.jinja", "{{ messages }}\xff\xfe");
    expect_refused(folder, {"chat_template.jinja", "not valid UTF-8"});
}

// additional_chat_templates/*.jinja are named templates beside the default one, written as
// gguf-py's add_chat_template writes a list of them.
BOOST_AUTO_TEST_CASE(additional_chat_templates_are_named_templates,
                     *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    write_bytes(folder / "chat_template.jinja", jinja_text);
    fs::create_directory(folder / "additional_chat_templates");
    write_bytes(folder / "additional_chat_templates" / "tool-use.jinja", "{{ tools }}");
    write_bytes(folder / "additional_chat_templates" / "rag.jinja", "{{ documents }}");
    const auto [run, md] = converted(folder, out);
    BOOST_TEST(string_key(md, "tokenizer.chat_template") == jinja_text);
    BOOST_TEST(string_key(md, "tokenizer.chat_template.rag") == "{{ documents }}");
    BOOST_TEST(string_key(md, "tokenizer.chat_template.tool_use") == "{{ tools }}");
    BOOST_TEST_REQUIRE(md.contains("tokenizer.chat_templates"));
    const ck::ArrayValue& names = md.find("tokenizer.chat_templates")->array();
    BOOST_TEST_REQUIRE(names.size() == 2u);
    BOOST_TEST(names.string_at(0) == "rag");
    BOOST_TEST(names.string_at(1) == "tool_use");
}

// A list of named templates in tokenizer_config.json (it was dropped without a word before);
// an entry that cannot be used is named in a warning.
BOOST_AUTO_TEST_CASE(named_templates_in_tokenizer_config, *utf::precondition(HfDataPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = make_checkpoint(dir, 1);
    json config = json::parse(std::ifstream(folder / "tokenizer_config.json"));
    config["chat_template"] = json::array({{{"name", "default"}, {"template", "{{ a }}"}},
                                           {{"name", "tool_use"}, {"template", "{{ b }}"}},
                                           {{"name", "broken"}, {"template", 7}}});
    std::ofstream(folder / "tokenizer_config.json") << config.dump(2);
    const auto [run, md] = converted(folder, out);
    BOOST_TEST(string_key(md, "tokenizer.chat_template") == "{{ a }}");
    BOOST_TEST(string_key(md, "tokenizer.chat_template.tool_use") == "{{ b }}");
    BOOST_TEST(!md.contains("tokenizer.chat_template.broken"));
    BOOST_TEST(contains(run.err, "tokenizer_config.json"), run.err);
    BOOST_TEST(contains(run.err, "\"broken\""), run.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_hf
