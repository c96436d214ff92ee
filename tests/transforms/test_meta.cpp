// The meta transform through the real binary: each edit read back with the gguf reader (type,
// bits, position), every other byte region compared with the input's, in-place edits, chained
// stages, the gguf-py recipes of docs/metadata-editing.md, and every refusal (exit 2, the
// problem named, nothing left behind). The value parser is also checked in process.
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/error.hpp"
#include "ck/plugin.hpp"
#include "gguf_reader.hpp"
#include "meta_values.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_meta {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

fs::path sample() {
    return cktest::examples_dir() / "micro-llama-q4_k_m.gguf";
}
// Every value type, alignment 64, a tensor name of exactly 63 bytes.
fs::path every_type() {
    return cktest::test_data() / "meta" / "metadata.gguf";
}

// A GGUF file as the project's reader sees it.
struct Gguf {
    explicit Gguf(const fs::path& path) : reader(context), header(reader.open(path)) {}
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader;
    ck::ModelHeader header;

    const ck::Value& at(const std::string& key) const {
        const ck::Value* v = header.metadata.find(key);
        BOOST_TEST_REQUIRE(v != nullptr, "key " << key << " is missing");
        return *v;
    }
    std::vector<std::string> keys() const {
        std::vector<std::string> out;
        for (const auto& [key, value] : header.metadata) out.push_back(key);
        return out;
    }
};

// The bytes of the data section (every tensor, each padded to the alignment).
std::vector<unsigned char> data_section(const fs::path& path) {
    const Gguf g(path);
    auto bytes = cktest::read_file(path);
    return {bytes.begin() + static_cast<std::ptrdiff_t>(g.reader.data_start()), bytes.end()};
}

bool same_value(const ck::Value& a, const ck::Value& b) {
    if (a.type() != b.type()) return false;
    if (a.type() == ck::ValueType::string) return a.str() == b.str();
    if (a.type() != ck::ValueType::array) return a.raw() == b.raw();
    const auto x = a.array().encoded(), y = b.array().encoded();
    return a.array().element_type() == b.array().element_type() &&
           a.array().size() == b.array().size() &&
           std::equal(x.begin(), x.end(), y.begin(), y.end());
}

cktest::RunResult convert(const std::string& pipeline, const fs::path& in, const fs::path& out,
                          std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--plugin-dir", cktest::test_plugin_dir().string(),
                                     "--pipeline",   pipeline,
                                     "-i",           in.string(),
                                     "-o",           out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return cktest::run_ckhost(args);
}

// Runs `pipeline` on `in` into an empty directory: exit 2, stderr naming `needle`, no file.
void expect_refused(const std::string& pipeline, const std::string& needle,
                    const fs::path& in = sample()) {
    cktest::TempDir out;
    auto r = convert(pipeline, in, out / "o.gguf");
    BOOST_TEST(r.exit_code == 2, pipeline << ": exit " << r.exit_code << " " << r.err);
    BOOST_TEST(contains(r.err, needle), pipeline << ": " << r.err);
    BOOST_TEST(out.entries().empty(), pipeline << " left a file behind");
}

// Runs `pipeline` on `in` and returns the output's path (inside `dir`).
fs::path edited(const cktest::TempDir& dir, const std::string& pipeline,
                const fs::path& in = sample()) {
    const fs::path out = dir / "o.gguf";
    auto r = convert(pipeline, in, out, {"--force"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, pipeline << ": " << r.err);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(meta)

BOOST_AUTO_TEST_CASE(set_gives_every_scalar_type_its_exact_bits) {
    // One stage per key: chained meta stages, each with its own set.
    struct Case {
        std::string key, typed;
        ck::ValueType type;
        std::uint64_t raw;
    };
    const std::vector<Case> cases = {
        {"t.u8", "u8:255", ck::ValueType::u8, 255},
        {"t.i8", "i8:-128", ck::ValueType::i8, 0x80},
        {"t.u16", "u16:65535", ck::ValueType::u16, 0xffff},
        {"t.i16", "i16:-32768", ck::ValueType::i16, 0x8000},
        {"t.u32", "u32:4294967295", ck::ValueType::u32, 0xffffffff},
        {"t.i32", "i32:-2147483648", ck::ValueType::i32, 0x80000000},
        {"t.u64", "u64:18446744073709551615", ck::ValueType::u64, ~0ull},
        {"t.i64", "i64:-9223372036854775808", ck::ValueType::i64, 1ull << 63},
        {"t.f32", "f32:0.1", ck::ValueType::f32, std::bit_cast<std::uint32_t>(0.1f)},
        {"t.f64", "f64:-2.5e-300", ck::ValueType::f64, std::bit_cast<std::uint64_t>(-2.5e-300)},
        {"t.bool", "bool:true", ck::ValueType::boolean, 1},
        {"t.false", "bool:false", ck::ValueType::boolean, 0},
    };
    std::string pipeline = "gguf";
    for (const Case& c : cases) pipeline += ":meta[set=" + c.key + "=" + c.typed + "]";
    // A string with the characters the grammar escapes, and UTF-8.
    pipeline += R"(:meta[set=t.str=str:héllo\, [wörld\] \\o/ a=b:c]:gguf)";
    cktest::TempDir dir;
    const Gguf out(edited(dir, pipeline));
    for (const Case& c : cases) {
        const ck::Value& v = out.at(c.key);
        BOOST_TEST((v.type() == c.type), c.key);
        BOOST_TEST(v.raw() == c.raw, c.key);
    }
    BOOST_TEST((out.at("t.str").type() == ck::ValueType::string));
    BOOST_TEST(out.at("t.str").str() == R"(héllo, [wörld] \o/ a=b:c)");
    // New keys are appended, in the order the stages set them.
    const auto keys = out.keys();
    BOOST_TEST_REQUIRE(keys.size() == 24u + cases.size() + 1);
    for (std::size_t i = 0; i < cases.size(); ++i) BOOST_TEST(keys[24 + i] == cases[i].key);
    BOOST_TEST(data_section(dir / "o.gguf") == data_section(sample()));
}

BOOST_AUTO_TEST_CASE(set_arrays_of_fixed_size_elements) {
    cktest::TempDir dir;
    const Gguf out(edited(dir,
                          "gguf:meta[set=t.heads=arr:i32:4 -2  7]:meta[set=t.none=arr:u8:]:"
                          "meta[set=t.flags=arr:bool:true false]:gguf"));
    const ck::ArrayValue& heads = out.at("t.heads").array();
    BOOST_TEST((heads.element_type() == ck::ValueType::i32));
    BOOST_TEST_REQUIRE(heads.size() == 3u);
    BOOST_TEST(heads.raw_at(0) == 4u);
    BOOST_TEST(heads.raw_at(1) == 0xfffffffeu);
    BOOST_TEST(heads.raw_at(2) == 7u);
    BOOST_TEST(out.at("t.none").array().size() == 0u);
    BOOST_TEST((out.at("t.none").array().element_type() == ck::ValueType::u8));
    BOOST_TEST(out.at("t.flags").array().raw_at(0) == 1u);
    BOOST_TEST(out.at("t.flags").array().raw_at(1) == 0u);
    expect_refused("gguf:meta[set=t.x=arr:str:a b]:gguf", "arrays of 'str' are not supported");
    expect_refused("gguf:meta[set=t.x=arr:u8:1 256]:gguf", "256 is out of range for u8");
    expect_refused("gguf:meta[set=t.x=arr:i32]:gguf", "expected KEY=arr:TYPE:V V V");
}

BOOST_AUTO_TEST_CASE(setting_a_key_to_its_value_reproduces_the_file) {
    // The sample was written by ggml, and gguf:gguf reproduces it byte for byte: an edit that
    // changes nothing must too (same position, same encoding, same layout).
    cktest::TempDir dir;
    BOOST_TEST(cktest::files_equal(
        edited(dir, "gguf:meta[set=general.name=str:micro-llama-test]:gguf"), sample()));
    BOOST_TEST(cktest::files_equal(
        edited(dir,
               "gguf:meta[set=test.f32=f32:3.14159274]:meta[set=test.limits.i64_min=i64:"
               "-9223372036854775808]:meta[set=general.alignment=u32:64]:gguf",
               every_type()),
        every_type()));
}

BOOST_AUTO_TEST_CASE(an_edit_leaves_everything_else_as_it_was) {
    cktest::TempDir dir;
    const Gguf in(sample());
    const Gguf out(edited(dir, "gguf:meta[set=general.name=str:X]:gguf"));
    BOOST_TEST(out.at("general.name").str() == "X");
    BOOST_TEST(out.keys() == in.keys());  // replaced in place
    for (const auto& [key, value] : in.header.metadata)
        if (key != "general.name") BOOST_TEST(same_value(value, out.at(key)), key);
    BOOST_TEST_REQUIRE(out.header.tensors.size() == in.header.tensors.size());
    for (std::size_t i = 0; i < in.header.tensors.size(); ++i) {
        const ck::TensorInfo &a = in.header.tensors[i], &b = out.header.tensors[i];
        BOOST_TEST(a.name == b.name);
        BOOST_TEST(a.type == b.type, a.name);
        BOOST_TEST(a.ne == b.ne, a.name);
        BOOST_TEST(a.nbytes == b.nbytes, a.name);
    }
    BOOST_TEST(data_section(dir / "o.gguf") == data_section(sample()));
}

BOOST_AUTO_TEST_CASE(set_file_stores_the_files_bytes) {
    cktest::TempDir dir;
    // CRLF, commas, brackets, a BOM and UTF-8: kept exactly (no newline translation).
    const std::string text =
        "\xEF\xBB\xBF{% for m in messages %}<|im_start|>{{ m['role'] }}, [x]\r\n{% endfor %}"
        " — ok\n";
    cktest::write_file(dir / "chat.jinja", {text.begin(), text.end()});
    const Gguf out(edited(dir, "gguf:meta[set_file=tokenizer.chat_template=" +
                                   (dir / "chat.jinja").string() + "]:gguf"));
    BOOST_TEST((out.at("tokenizer.chat_template").type() == ck::ValueType::string));
    BOOST_TEST(out.at("tokenizer.chat_template").str() == text);
    BOOST_TEST(out.keys().back() == "tokenizer.chat_template");
    BOOST_TEST(data_section(dir / "o.gguf") == data_section(sample()));

    expect_refused(
        "gguf:meta[set_file=tokenizer.chat_template=" + (dir / "absent.jinja").string() + "]:gguf",
        "absent.jinja: key 'tokenizer.chat_template': set_file: no such file");
    const std::string bad = "ok\xC0\xAF";  // an overlong '/'
    cktest::write_file(dir / "bad.jinja", {bad.begin(), bad.end()});
    expect_refused(
        "gguf:meta[set_file=tokenizer.chat_template=" + (dir / "bad.jinja").string() + "]:gguf",
        "byte 2: key 'tokenizer.chat_template': set_file: the file is not valid UTF-8");
    expect_refused("gguf:meta[set_file=t.x=" + dir.path().string() + "]:gguf",
                   "not a regular file");
}

BOOST_AUTO_TEST_CASE(del_removes_a_key_or_every_key_a_glob_matches) {
    cktest::TempDir dir;
    const Gguf in(sample());
    const Gguf exact(edited(dir, "gguf:meta[del=general.type]:gguf"));
    std::vector<std::string> expected = in.keys();
    std::erase(expected, "general.type");
    BOOST_TEST(exact.keys() == expected);

    const Gguf glob(edited(dir, "gguf:meta[del=tokenizer.ggml.*_token_id]:gguf"));
    expected = in.keys();
    std::erase_if(expected, [](const std::string& k) { return k.ends_with("_token_id"); });
    BOOST_TEST(glob.keys() == expected);
    BOOST_TEST(glob.keys().size() == in.keys().size() - 3);
    BOOST_TEST(data_section(dir / "o.gguf") == data_section(sample()));

    expect_refused("gguf:meta[del=general.url]:gguf",
                   "key 'general.url': del: no key of the model");
    expect_refused("gguf:meta[del=tokenizer.x*]:gguf", "no key of the model matches");
    expect_refused("gguf:meta[del]:gguf", "expected del=KEY or del=GLOB");
}

BOOST_AUTO_TEST_CASE(rename_keeps_the_keys_position_and_value) {
    cktest::TempDir dir;
    const Gguf in(sample());
    const Gguf out(edited(dir, "gguf:meta[rename=llama.rope.freq_base=llama.rope.theta]:gguf"));
    std::vector<std::string> expected = in.keys();
    std::ranges::replace(expected, std::string("llama.rope.freq_base"),
                         std::string("llama.rope.theta"));
    BOOST_TEST(out.keys() == expected);
    BOOST_TEST(same_value(out.at("llama.rope.theta"), in.at("llama.rope.freq_base")));
    BOOST_TEST(data_section(dir / "o.gguf") == data_section(sample()));

    expect_refused("gguf:meta[rename=general.url=general.source.url]:gguf",
                   "key 'general.url': rename: no such key");
    expect_refused("gguf:meta[rename=general.type=general.name]:gguf",
                   "key 'general.name': rename: already exists");
    expect_refused("gguf:meta[rename=general.name=general.name]:gguf", "the new name is the old");
    // The moved value must suit its new name: llama.cpp reads context_length as u32.
    expect_refused(
        "gguf:meta[del=llama.context_length]:meta[rename=llama.rope.freq_base=llama."
        "context_length]:gguf",
        "key 'llama.context_length': rename: must be of type u32, not f32");
}

BOOST_AUTO_TEST_CASE(rename_tensors_keeps_every_data_byte) {
    cktest::TempDir dir;
    const Gguf in(sample());
    const Gguf out(
        edited(dir, R"(gguf:meta[rename_tensors=^blk\.(\d+)\.(\w+)=layers.$1.$2]:gguf)"));
    BOOST_TEST_REQUIRE(out.header.tensors.size() == in.header.tensors.size());
    std::size_t renamed = 0;
    for (std::size_t i = 0; i < in.header.tensors.size(); ++i) {
        const ck::TensorInfo &a = in.header.tensors[i], &b = out.header.tensors[i];
        std::string expected = a.name;
        if (a.name.starts_with("blk.")) {
            expected = "layers." + a.name.substr(4);
            ++renamed;
        }
        BOOST_TEST(b.name == expected);
        BOOST_TEST(b.type == a.type, a.name);
        BOOST_TEST(b.ne == a.ne, a.name);
    }
    BOOST_TEST(renamed == 18u);
    BOOST_TEST(out.header.metadata.size() == in.header.metadata.size());
    BOOST_TEST(data_section(dir / "o.gguf") == data_section(sample()));
    // Every match is replaced (like sed's s///g), and renaming back gives the input again.
    const Gguf all(edited(dir, "gguf:meta[rename_tensors=_=-]:gguf"));
    BOOST_TEST(all.header.tensors[1].name == "blk.0.attn-norm.weight");
    BOOST_TEST(cktest::files_equal(
        edited(dir, R"(gguf:meta[rename_tensors=^blk\.=L.]:meta[rename_tensors=^L\.=blk.]:gguf)"),
        sample()));
    // A name of exactly 63 bytes is allowed.
    const Gguf longest(
        edited(dir, "gguf:meta[rename_tensors=^t\\.f32_6x1$=" + std::string(63, 'n') + "]:gguf",
               every_type()));
    BOOST_TEST(longest.header.find_tensor(std::string(63, 'n')) != nullptr);
}

BOOST_AUTO_TEST_CASE(chained_stages_apply_in_order) {
    cktest::TempDir dir;
    const Gguf out(edited(dir,
                          "gguf:meta[set=t.a=str:x]:meta[del=general.name]:meta[rename=t.a=t.b]:"
                          "meta[set=t.b=u8:7]:gguf"));
    BOOST_TEST(!out.header.metadata.contains("general.name"));
    BOOST_TEST(!out.header.metadata.contains("t.a"));
    BOOST_TEST((out.at("t.b").type() == ck::ValueType::u8));
    BOOST_TEST(out.at("t.b").raw() == 7u);
    // Within one stage the order is fixed: del, rename, set, rename_tensors.
    const Gguf one(edited(dir,
                          "gguf:meta[set=general.title=str:T,rename=general.name=general.title,"
                          "del=general.type,rename_tensors=^output=out]:gguf"));
    BOOST_TEST(!one.header.metadata.contains("general.type"));
    BOOST_TEST(!one.header.metadata.contains("general.name"));
    BOOST_TEST(one.at("general.title").str() == "T");
    BOOST_TEST(one.keys()[1] == "general.title");  // general.name's place, general.type gone
    BOOST_TEST(one.header.find_tensor("out.weight") != nullptr);
    BOOST_TEST(one.header.find_tensor("out_norm.weight") != nullptr);
}

BOOST_AUTO_TEST_CASE(edits_compose_with_other_stages_and_any_thread_count) {
    // A transform before and after meta (testkit passes tensors through), on one thread and on
    // several: the same bytes.
    cktest::TempDir dir;
    const std::string pipeline =
        "gguf:testkit_concurrent:meta[set=general.name=str:Y,rename_tensors=^blk=b]:"
        "testkit_concurrent:gguf";
    auto one = convert(pipeline, sample(), dir / "one.gguf", {"--threads", "1"});
    auto many = convert(pipeline, sample(), dir / "many.gguf", {"--threads", "4"});
    BOOST_TEST_REQUIRE(one.exit_code == 0, one.err);
    BOOST_TEST_REQUIRE(many.exit_code == 0, many.err);
    BOOST_TEST(cktest::files_equal(dir / "one.gguf", dir / "many.gguf"));
    BOOST_TEST(data_section(dir / "one.gguf") == data_section(sample()));
    auto plugins = cktest::run_ckhost({"plugins"});
    BOOST_TEST(
        contains(plugins.out, "meta  (transform)  version 1.0.0  ABI " +
                                  std::to_string(CK_PLUGIN_ABI_VERSION) + "  concurrent: yes"),
        plugins.out);
}

BOOST_AUTO_TEST_CASE(batch_jobs_carry_escapes_with_doubled_backslashes) {
    // docs/metadata-editing.md: a text jobs line is split like a shell line, so each backslash
    // of the pipeline is written twice; a JSON jobs file escapes it the same way.
    cktest::TempDir dir;
    const std::string text = "'gguf:meta[set=general.name=str:a\\\\, b]:gguf' " +
                             sample().string() + " " + (dir / "text.gguf").string() + "\n" +
                             R"('gguf:meta[rename_tensors=^blk\\.(\\d+)\\.=L$1.]:gguf' )" +
                             sample().string() + " " + (dir / "regex.gguf").string() + "\n";
    cktest::write_file(dir / "jobs.txt", {text.begin(), text.end()});
    const std::string json = R"([{"pipeline": "gguf:meta[set=general.name=str:c\\, d]:gguf", )"
                             R"("input": ")" +
                             sample().string() + R"(", "output": ")" +
                             (dir / "json.gguf").string() + R"("}])";
    cktest::write_file(dir / "jobs.json", {json.begin(), json.end()});
    for (const char* jobs : {"jobs.txt", "jobs.json"}) {
        auto r = cktest::run_ckhost({"batch", (dir / jobs).string()});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.out << r.err);
    }
    BOOST_TEST(Gguf(dir / "text.gguf").at("general.name").str() == "a, b");
    BOOST_TEST(Gguf(dir / "regex.gguf").header.find_tensor("L1.attn_q.weight") != nullptr);
    BOOST_TEST(Gguf(dir / "json.gguf").at("general.name").str() == "c, d");
}

BOOST_AUTO_TEST_CASE(in_place_edit_replaces_the_file_atomically) {
    cktest::TempDir dir;
    const fs::path model = dir / "m.gguf";
    fs::copy_file(sample(), model);
    auto r =
        convert("gguf:meta[set=general.name=str:Edited in place]:gguf", model, model, {"--force"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const Gguf out(model);
    BOOST_TEST(out.at("general.name").str() == "Edited in place");
    BOOST_TEST(data_section(model) == data_section(sample()));
    BOOST_TEST(dir.entries() == std::vector<std::string>{"m.gguf"});
    auto verify = cktest::run_ckhost({"verify", model.string()});
    BOOST_TEST(verify.exit_code == 0, verify.err);
}

BOOST_AUTO_TEST_CASE(failing_in_place_edit_leaves_the_original) {
    cktest::TempDir dir;
    const fs::path model = dir / "m.gguf";
    fs::copy_file(sample(), model);
    const auto before = cktest::read_file(model);
    // Refused while planning (a wrong type)...
    auto r = convert("gguf:meta[set=general.name=u8:1]:gguf", model, model, {"--force"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "key 'general.name'"), r.err);
    BOOST_TEST(cktest::read_file(model) == before);
    // ...or failing half-way through the tensors, after the output was begun.
    r = convert("gguf:meta[set=general.name=str:Z]:testkit[fail_at=5,fail_with=ck]:gguf", model,
                model, {"--force"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(cktest::read_file(model) == before);
    BOOST_TEST(dir.entries() == std::vector<std::string>{"m.gguf"});
}

BOOST_AUTO_TEST_CASE(dry_run_shows_renames_and_edits_and_writes_nothing) {
    cktest::TempDir dir;
    auto r = convert(R"(gguf:meta[set=general.name=str:D,rename_tensors=^blk\.0\.=first.]:gguf)",
                     sample(), dir / "o.gguf", {"--dry-run"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "first.attn_q.weight: meta q4_K"), r.out);
    BOOST_TEST(contains(r.out, "[renamed from 'blk.0.attn_q.weight']"), r.out);
    BOOST_TEST(contains(r.out, "blk.0.attn_q.weight: renamed to 'first.attn_q.weight'"), r.out);
    BOOST_TEST(!contains(r.out, "dropped"), r.out);
    BOOST_TEST(contains(r.err, "meta: set general.name (str); renamed 9 tensors"), r.err);
    BOOST_TEST(dir.entries().empty());
}

BOOST_AUTO_TEST_CASE(wrong_types_are_usage_errors) {
    expect_refused("gguf:meta[set=general.file_type=i32:15]:gguf",
                   "key 'general.file_type': set: must be of type u32, not i32");
    expect_refused("gguf:meta[set=general.name=u8:1]:gguf", "must be of type str, not u8");
    expect_refused("gguf:meta[set=general.architecture=arr:u8:1]:gguf",
                   "must be of type str, not arr");
    expect_refused("gguf:meta[set=tokenizer.ggml.eos_token_id=i32:2]:gguf",
                   "must be of type u32, not i32");
    expect_refused("gguf:meta[set=llama.context_length=u64:4096]:gguf",
                   "key 'llama.context_length': set: must be of type u32, not u64");
    expect_refused("gguf:meta[set=llama.attention.layer_norm_rms_epsilon=f64:1e-5]:gguf",
                   "must be of type f32, not f64");
    expect_refused("gguf:meta[set=t.x=u9:1]:gguf", "key 't.x': set: unknown type 'u9'");
    // <arch> is the model's architecture: another architecture's keys are free.
    cktest::TempDir dir;
    BOOST_TEST(Gguf(edited(dir, "gguf:meta[set=qwen2.context_length=u64:1]:gguf"))
                   .at("qwen2.context_length")
                   .raw() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_values_are_usage_errors) {
    expect_refused("gguf:meta[set=t.x=u8:256]:gguf", "key 't.x': set: 256 is out of range for u8");
    expect_refused("gguf:meta[set=t.x=u8:-1]:gguf", "'-1' is not a u8");
    expect_refused("gguf:meta[set=t.x=i16:40000]:gguf", "out of range for i16 (-32768 to 32767)");
    expect_refused("gguf:meta[set=t.x=u32:12abc]:gguf", "'12abc' is not a u32");
    expect_refused("gguf:meta[set=t.x=bool:1]:gguf", "expected true or false");
    expect_refused("gguf:meta[set=t.x=f32:1e39]:gguf", "out of range for f32");
    expect_refused("gguf:meta[set=t.x=str:\xff]:gguf", "not valid UTF-8");
    expect_refused("gguf:meta[set=t.x]:gguf", "expected set=KEY=TYPE:VALUE, got 't.x'");
    expect_refused("gguf:meta[set=t.x=hello]:gguf", "expected KEY=TYPE:VALUE");
}

// set=KEY=VALUE without a type: llama.cpp's type for the keys it fixes, else the type the key
// has in the input; a value whose first word is not a type name is the whole value.
BOOST_AUTO_TEST_CASE(set_without_a_type_takes_the_keys_known_type) {
    cktest::TempDir dir;
    const Gguf in(sample());
    const std::string arch = in.at("general.architecture").str();
    const fs::path named = edited(dir, "gguf:meta[set=general.name=Llama: the sequel]:gguf");
    BOOST_TEST((Gguf(named).at("general.name").type() == ck::ValueType::string));
    BOOST_TEST(Gguf(named).at("general.name").str() == "Llama: the sequel");

    cktest::TempDir dir2;
    const std::string context_key = arch + ".context_length";
    const fs::path context = edited(dir2, "gguf:meta[set=" + context_key + "=4096]:gguf");
    BOOST_TEST((Gguf(context).at(context_key).type() == ck::ValueType::u32));
    BOOST_TEST(Gguf(context).at(context_key).raw() == 4096u);

    // A key the table does not know, present in the input: its own type is kept.
    const std::string dims_key = arch + ".rope.dimension_count";
    const ck::ValueType dims_type = in.at(dims_key).type();
    cktest::TempDir dir3;
    const fs::path dims = edited(dir3, "gguf:meta[set=" + dims_key + "=32]:gguf");
    BOOST_TEST((Gguf(dims).at(dims_key).type() == dims_type));
    BOOST_TEST(Gguf(dims).at(dims_key).raw() == 32u);

    // The known type still refuses what is not of it, and an unknown key needs a type.
    expect_refused("gguf:meta[set=" + context_key + "=4k]:gguf", "'4k' is not a u32");
    expect_refused("gguf:meta[set=my.key=7]:gguf",
                   "does not say its type and the key is neither one whose type llama.cpp fixes "
                   "nor in the input: expected KEY=TYPE:VALUE (e.g. my.key=str:7");
}

BOOST_AUTO_TEST_CASE(unknown_tensors_and_bad_names_are_usage_errors) {
    expect_refused("gguf:meta[rename_tensors=^nothing\\.=x.]:gguf",
                   "'^nothing\\.' matches no tensor of the model (unknown tensors)");
    expect_refused(R"(gguf:meta[rename_tensors=^blk\.\d+\.=layer.]:gguf)",
                   "tensor 'layer.attn_norm.weight': rename_tensors: tensors "
                   "'blk.0.attn_norm.weight' and 'blk.1.attn_norm.weight' would both have this "
                   "name");
    expect_refused("gguf:meta[rename_tensors=^output_norm=output]:gguf",
                   "tensors 'output_norm.weight' and 'output.weight' would both");
    expect_refused("gguf:meta[rename_tensors=^t\\.name_of=t.names_of]:gguf",
                   "is 64 bytes; GGUF (ggml) allows at most 63", every_type());
    expect_refused("gguf:meta[rename_tensors=^.*$=]:gguf", "the new name is empty");
    expect_refused("gguf:meta[rename_tensors=(blk=x]:gguf", "not an ECMAScript regular expression");
    // What libstdc++'s regex compiler cannot take safely (found by fuzz_stage_options): a
    // 20-digit back-reference overflows its counter, 30000 nested groups overflowed the stack.
    expect_refused(R"(gguf:meta[rename_tensors=blk\18446744073709551616=x]:gguf)",
                   "holds a number of more than 9 digits");
    expect_refused("gguf:meta[rename_tensors=" + std::string(30000, '(') + std::string(30000, ')') +
                       "=x]:gguf",
                   "the pattern is 60000 bytes; at most 1024 are allowed");
    expect_refused("gguf:meta[rename_tensors=blk]:gguf",
                   "expected rename_tensors=PATTERN=REPLACEMENT");
}

BOOST_AUTO_TEST_CASE(keys_that_would_break_the_format_are_refused) {
    expect_refused("gguf:meta[set=split.count=u16:2]:gguf",
                   "key 'split.count': set: split.* keys describe a llama-gguf-split set");
    expect_refused("gguf:meta[del=split.*]:gguf", "key 'split.*': del: split.* keys");
    expect_refused("gguf:meta[rename=general.name=split.no]:gguf", "key 'split.no': rename");
    expect_refused("gguf:meta[set=general.alignment=u32:48]:gguf",
                   "key 'general.alignment': set: must be a power of two (gguf.md), not 48");
    expect_refused("gguf:meta[set=general.alignment=u32:0]:gguf", "must be a power of two");
    expect_refused("gguf:meta[set=general.alignment=u64:64]:gguf", "must be of type u32, not u64");
    expect_refused("gguf:meta[del=general.architecture]:gguf",
                   "key 'general.architecture': del: general.architecture is required");
    expect_refused("gguf:meta[del=general.*]:gguf", "key 'general.architecture': del");
    expect_refused("gguf:meta[rename=general.architecture=general.arch]:gguf",
                   "general.architecture is required");
    expect_refused("gguf:meta[set=ckhost.headpack.aligned_head_dim=u32:64]:gguf",
                   "ckhost.* keys record what a stage did");
    expect_refused("gguf:meta[set==u8:1]:gguf", "expected set=KEY=TYPE:VALUE");
    expect_refused("gguf:meta[set=" + std::string(65536, 'k') + "=u8:1]:gguf",
                   "key name of 65536 bytes; GGUF allows at most 65535");
    expect_refused("gguf:meta[rename=general.name=n\xC3]:gguf", "key name is not valid UTF-8");
    expect_refused("gguf:meta[set=t.x=u8:1,set_file=t.x=f]:gguf", "given a value by two options");
    expect_refused("gguf:meta:gguf", "meta needs at least one edit");
    // The longest key GGUF allows is written and read back.
    cktest::TempDir dir;
    const std::string longest(65535, 'k');
    BOOST_TEST(Gguf(edited(dir, "gguf:meta[set=" + longest + "=u8:1]:gguf")).keys().back() ==
               longest);
}

BOOST_AUTO_TEST_CASE(special_token_finds_the_tokens_id) {
    cktest::TempDir dir;
    const Gguf out(
        edited(dir, "gguf:meta[special_token=padding:</s>]:meta[special_token=eos:<0x00>]:gguf"));
    BOOST_TEST((out.at("tokenizer.ggml.padding_token_id").type() == ck::ValueType::u32));
    BOOST_TEST(out.at("tokenizer.ggml.padding_token_id").raw() == 2u);
    BOOST_TEST(out.at("tokenizer.ggml.eos_token_id").raw() == 3u);
    BOOST_TEST(data_section(dir / "o.gguf") == data_section(sample()));
    expect_refused("gguf:meta[special_token=eos:<|im_end|>]:gguf",
                   "key 'tokenizer.ggml.eos_token_id': special_token: '<|im_end|>' is not one of "
                   "the 1024 tokens");
    expect_refused("gguf:meta[special_token=eoss:</s>]:gguf", "unknown special token 'eoss'");
    expect_refused("gguf:meta[special_token=eos:</s>]:gguf", "no string array of tokens",
                   every_type());
    expect_refused("gguf:meta[set=tokenizer.ggml.eos_token_id=u32:1024]:gguf",
                   "token id 1024 is past the model's 1024 tokens");
}

// docs/metadata-editing.md: gguf_new_metadata.py's and gguf_set_metadata.py's habits as
// ckhost commands, run exactly as documented.
BOOST_AUTO_TEST_CASE(recipes_of_the_gguf_py_scripts) {
    cktest::TempDir dir;
    const fs::path model = dir / "model.gguf";
    fs::copy_file(sample(), model);
    const std::string jinja = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}";
    cktest::write_file(dir / "chat.jinja", {jinja.begin(), jinja.end()});
    // --general-name, --general-description, --pre-tokenizer, --remove-metadata,
    // --chat-template-file, --special-token, --special-token-by-id, in one pipeline.
    auto r = convert(
        "gguf:meta[set=general.name=str:My Model]"
        ":meta[set=general.description=str:A test model\\, tuned]"
        ":meta[set=tokenizer.ggml.pre=str:default]"
        ":meta[del=general.type]"
        ":meta[set_file=tokenizer.chat_template=" +
            (dir / "chat.jinja").string() +
            "]"
            ":meta[special_token=eos:</s>]"
            ":meta[set=tokenizer.ggml.bos_token_id=u32:1]:gguf",
        model, dir / "new.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const Gguf out(dir / "new.gguf");
    BOOST_TEST(out.at("general.name").str() == "My Model");
    BOOST_TEST(out.at("general.description").str() == "A test model, tuned");
    BOOST_TEST(out.at("tokenizer.ggml.pre").str() == "default");
    BOOST_TEST(!out.header.metadata.contains("general.type"));
    BOOST_TEST(out.at("tokenizer.chat_template").str() == jinja);
    BOOST_TEST(out.at("tokenizer.ggml.eos_token_id").raw() == 2u);
    BOOST_TEST(out.at("tokenizer.ggml.bos_token_id").raw() == 1u);
    BOOST_TEST(data_section(dir / "new.gguf") == data_section(sample()));
    // --chat-template '...' given inline: its ',' and ']' escaped.
    r = convert(
        R"(gguf:meta[set=tokenizer.chat_template=str:{% for m in messages %}{{ m['role'\] }}\, )"
        R"({{ m.content }}{% endfor %}]:gguf)",
        model, dir / "inline.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(Gguf(dir / "inline.gguf").at("tokenizer.chat_template").str() ==
               "{% for m in messages %}{{ m['role'] }}, {{ m.content }}{% endfor %}");
    // gguf_set_metadata.py model.gguf llama.context_length 1024, in place.
    r = convert("gguf:meta[set=llama.context_length=u32:1024]:gguf", model, model, {"--force"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(Gguf(model).at("llama.context_length").raw() == 1024u);
    BOOST_TEST(data_section(model) == data_section(sample()));
}

BOOST_AUTO_TEST_CASE(typed_values_are_parsed_strictly) {
    using ckplugin::meta::parse_typed_value;
    auto refused = [](const std::string& typed) {
        try {
            parse_typed_value(typed, "k");
        } catch (const ck::Error& e) {
            return e.kind() == ck::ErrorKind::usage && e.subject() == "key 'k'";
        }
        return false;
    };
    for (const char* bad : {"u8:",
                            "u8:+1",
                            "u8: 1",
                            "u8:1 ",
                            "u8:0x10",
                            "u8:1.0",
                            "i8:128",
                            "u16:65536",
                            "i32:2147483648",
                            "u64:18446744073709551616",
                            "i64:9223372036854775808",
                            "f32:",
                            "f32:1,5",
                            "f32:0x1p3",
                            "f64:1e309",
                            "bool:True",
                            "bool:1",
                            "bool:",
                            "arr:u8",
                            "u8",
                            "float:1",
                            "arr:arr:1"})
        BOOST_TEST(refused(bad), "'" << bad << "' should be refused");
    BOOST_TEST(parse_typed_value("u8:007", "k").raw() == 7u);
    BOOST_TEST(parse_typed_value("i16:-1", "k").raw() == 0xffffu);
    BOOST_TEST(parse_typed_value("f32:-0", "k").raw() == 0x80000000u);
    BOOST_TEST(parse_typed_value("f32:inf", "k").raw() == 0x7f800000u);
    BOOST_TEST(parse_typed_value("f32:1e-45", "k").raw() == 1u);  // the smallest denormal
    BOOST_TEST(parse_typed_value("f64:0.1", "k").raw() == 0x3fb999999999999au);
    BOOST_TEST(parse_typed_value("str:", "k").str().empty());
    BOOST_TEST(parse_typed_value("str:a:b", "k").str() == "a:b");
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_meta
