// The gguf writer's split sets (split_max_size, split_max_tensors): byte for byte the sets
// llama-gguf-split wrote in shared/testdata/split; the planning rules on made-up headers; the
// shards' structure on the committed sample model, read back by a parser of this test's own
// (the plugin's reader refuses a lone shard); and every error before anything is written.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/support/byte_cursor.hpp"
#include "gguf_split_plan.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_gguf_split_write {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using ckplugin::gguf::SplitSettings;
using cktest::contains;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

std::vector<std::string> file_names(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string> shard_names(const std::string& stem, std::size_t count) {
    std::vector<std::string> names;
    for (std::size_t k = 0; k < count; ++k)
        names.push_back(ckplugin::gguf::shard_path(stem, k, count).string());
    return names;
}

// --- A GGUF file as this test reads it, field by field --------------------------------------

struct ParsedKv {
    std::string key;
    std::uint32_t type = 0;
    std::vector<unsigned char> value;  // the value's encoded bytes
};

struct ParsedTensor {
    std::string name;
    std::vector<std::int64_t> ne;
    std::uint32_t type = 0;
    std::uint64_t offset = 0;
    std::uint64_t nbytes = 0;
};

struct ParsedGguf {
    std::vector<unsigned char> bytes;
    std::uint32_t version = 0;
    std::vector<ParsedKv> kvs;
    std::vector<ParsedTensor> tensors;
    std::uint64_t data_start = 0;
    std::uint64_t alignment = 32;

    const ParsedKv* find(const std::string& key) const {
        for (const ParsedKv& kv : kvs)
            if (kv.key == key) return &kv;
        return nullptr;
    }
    // A scalar value, little-endian, zero-extended.
    std::uint64_t scalar(const std::string& key) const {
        const ParsedKv* kv = find(key);
        BOOST_TEST_REQUIRE(kv != nullptr, "no key " << key);
        std::uint64_t v = 0;
        for (std::size_t i = kv->value.size(); i-- > 0;) v = v << 8 | kv->value[i];
        return v;
    }
    std::vector<unsigned char> data(const ParsedTensor& t) const {
        const auto begin = bytes.begin() + static_cast<std::ptrdiff_t>(data_start + t.offset);
        return {begin, begin + static_cast<std::ptrdiff_t>(t.nbytes)};
    }
};

void skip_value(ck::support::ByteCursor& in, std::uint32_t type) {
    if (type == static_cast<std::uint32_t>(ck::ValueType::string)) {
        in.skip(in.read<std::uint64_t>("string length"), "string");
    } else if (type == static_cast<std::uint32_t>(ck::ValueType::array)) {
        const auto element = in.read<std::uint32_t>("array type");
        const auto count = in.read<std::uint64_t>("array count");
        for (std::uint64_t i = 0; i < count; ++i) skip_value(in, element);
    } else {
        in.skip(ck::value_type_size(static_cast<ck::ValueType>(type)), "value");
    }
}

ParsedGguf parse_gguf(const fs::path& path) {
    ParsedGguf g;
    g.bytes = cktest::read_file(path);
    ck::support::ByteCursor in(std::as_bytes(std::span(g.bytes)), path.string());
    BOOST_TEST_REQUIRE(in.chars(4, "magic") == "GGUF");
    g.version = in.read<std::uint32_t>("version");
    const auto n_tensors = in.read<std::uint64_t>("n_tensors");
    const auto n_kv = in.read<std::uint64_t>("n_kv");
    auto string = [&] { return std::string(in.chars(in.read<std::uint64_t>("length"), "text")); };
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        ParsedKv kv;
        kv.key = string();
        kv.type = in.read<std::uint32_t>("type");
        const std::uint64_t start = in.pos();
        skip_value(in, kv.type);
        kv.value.assign(g.bytes.begin() + static_cast<std::ptrdiff_t>(start),
                        g.bytes.begin() + static_cast<std::ptrdiff_t>(in.pos()));
        g.kvs.push_back(std::move(kv));
    }
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        ParsedTensor t;
        t.name = string();
        const auto n_dims = in.read<std::uint32_t>("n_dims");
        for (std::uint32_t d = 0; d < n_dims; ++d) t.ne.push_back(in.read<std::int64_t>("ne"));
        t.type = in.read<std::uint32_t>("type");
        t.offset = in.read<std::uint64_t>("offset");
        t.nbytes = ck::tensor_bytes(t.type, t.ne).value();
        g.tensors.push_back(std::move(t));
    }
    if (g.find("general.alignment")) g.alignment = g.scalar("general.alignment");
    g.data_start = (in.pos() + g.alignment - 1) / g.alignment * g.alignment;
    return g;
}

std::uint64_t padded(std::uint64_t n, std::uint64_t alignment = 32) {
    return (n + alignment - 1) / alignment * alignment;
}

// Checks that the shards in `dir` named `names` are a split set of `input` as llama-gguf-split
// makes them: shard k holds `counts[k]` tensors, the first one every key of the input, each
// one split.no, split.tensors.count and split.count last; tensors, shapes, types and data are
// the input's, in order, packed at 32 bytes.
void check_split_set(const fs::path& input, const fs::path& dir,
                     const std::vector<std::string>& names,
                     const std::vector<std::size_t>& counts) {
    BOOST_TEST_REQUIRE(file_names(dir) == names);
    BOOST_TEST_REQUIRE(names.size() == counts.size());
    const ParsedGguf model = parse_gguf(input);
    std::size_t next = 0;  // the input's tensor the next shard starts with
    for (std::size_t k = 0; k < names.size(); ++k) {
        BOOST_TEST_CONTEXT("shard " << names[k]) {
            const ParsedGguf shard = parse_gguf(dir / names[k]);
            BOOST_TEST(shard.version == 3u);
            const std::size_t own = k == 0 ? model.kvs.size() : 0;
            BOOST_TEST_REQUIRE(shard.kvs.size() == own + 3);
            for (std::size_t i = 0; i < own; ++i) {
                BOOST_TEST(shard.kvs[i].key == model.kvs[i].key);
                BOOST_TEST(shard.kvs[i].type == model.kvs[i].type);
                BOOST_TEST((shard.kvs[i].value == model.kvs[i].value), shard.kvs[i].key);
            }
            const std::vector<std::pair<std::string, std::uint32_t>> split_keys = {
                {"split.no", 2}, {"split.tensors.count", 5}, {"split.count", 2}};  // u16, i32
            for (std::size_t i = 0; i < 3; ++i) {
                BOOST_TEST(shard.kvs[own + i].key == split_keys[i].first);
                BOOST_TEST(shard.kvs[own + i].type == split_keys[i].second);
            }
            BOOST_TEST(shard.scalar("split.no") == k);
            BOOST_TEST(shard.scalar("split.count") == names.size());
            BOOST_TEST(shard.scalar("split.tensors.count") == model.tensors.size());

            BOOST_TEST_REQUIRE(shard.tensors.size() == counts[k]);
            std::uint64_t offset = 0;
            for (const ParsedTensor& t : shard.tensors) {
                const ParsedTensor& m = model.tensors.at(next++);
                BOOST_TEST(t.name == m.name);
                BOOST_TEST(t.type == m.type);
                BOOST_TEST(t.ne == m.ne);
                BOOST_TEST(t.offset == offset);
                BOOST_TEST((shard.data(t) == model.data(m)), t.name);
                offset += padded(t.nbytes);
            }
            BOOST_TEST(shard.bytes.size() == shard.data_start + offset);
        }
    }
    BOOST_TEST(next == model.tensors.size());
}

bool split_data_present() {
    return cktest::have_shared_data() && fs::exists(*cktest::shared_data() / "split" / "by-size");
}

struct SplitDataPresent {
    boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
        boost::test_tools::assertion_result ok(split_data_present());
        ok.message() << "../shared/testdata/split is absent: skipping the comparisons with "
                        "llama-gguf-split's own sets";
        return ok;
    }
};

ck::TensorInfo f32_tensor(std::string name, std::int64_t elements) {
    ck::TensorInfo t;
    t.name = std::move(name);
    t.type = 0;
    t.ne = {elements};
    t.nbytes = static_cast<std::uint64_t>(elements) * 4;
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gguf_split_write)

// The required test: both sets of shared/testdata/split, byte for byte, and nothing else.
BOOST_AUTO_TEST_CASE(llama_gguf_split_sets_byte_for_byte, *utf::precondition(SplitDataPresent())) {
    const fs::path root = *cktest::shared_data();
    const fs::path input = root / "tiny-llama-q4_k_m.gguf";
    struct Case {
        std::string option, reference, output;
    };
    // -o NAME.gguf and -o DIR/ (the input's name) both give llama's names. 5M is
    // llama-gguf-split's 5*1000^2 bytes, so the same size in bytes, or as 5MB, is the same set.
    for (const Case& c :
         {Case{"split_max_tensors=15", "by-tensors", "tiny-llama-q4_k_m.gguf"},
          Case{"split_max_size=5M", "by-size", ""}, Case{"split_max_size=5000000", "by-size", ""},
          Case{"split_max_size=5MB", "by-size", "tiny-llama-q4_k_m.gguf"}}) {
        BOOST_TEST_CONTEXT(c.option) {
            cktest::TempDir out;
            const fs::path reference = root / "split" / c.reference;
            const std::string target =
                c.output.empty() ? out.path().string() + "/" : (out / c.output).string();
            auto r = cktest::run_ckhost(
                {"--pipeline", "gguf:gguf[" + c.option + "]", "-i", input.string(), "-o", target});
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            BOOST_TEST_REQUIRE(file_names(out.path()) == file_names(reference));
            for (const std::string& name : file_names(reference))
                BOOST_TEST(cktest::files_equal(out / name, reference / name),
                           name << " differs from llama-gguf-split's");
        }
    }
}

// The merged file already has the split keys (split.count = 0): they move to the end again,
// which gives the very same set; a plain gguf:gguf keeps them as they are.
BOOST_AUTO_TEST_CASE(merged_file_splits_into_the_same_set_and_copies_as_it_is,
                     *utf::precondition(SplitDataPresent())) {
    const fs::path split = *cktest::shared_data() / "split";
    const fs::path merged = split / "tiny-llama-q4_k_m.merged.gguf";
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_size=5M]", "-i",
                                 merged.string(), "-o", (out / "tiny-llama-q4_k_m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST_REQUIRE(file_names(out.path()) == file_names(split / "by-size"));
    for (const std::string& name : file_names(split / "by-size"))
        BOOST_TEST(cktest::files_equal(out / name, split / "by-size" / name), name);

    cktest::TempDir copy;
    r = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", merged.string(), "-o", (copy / "m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(copy / "m.gguf", merged));
}

BOOST_AUTO_TEST_CASE(a_first_tensor_larger_than_the_size_is_refused,
                     *utf::precondition(SplitDataPresent())) {
    // token_embd.weight is 4,608,000 bytes: llama-gguf-split fails too ("0 tensors").
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_size=4M]", "-i",
                                 (*cktest::shared_data() / "tiny-llama-q4_k_m.gguf").string(), "-o",
                                 (out / "t.gguf").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "token_embd.weight"), r.err);
    BOOST_TEST(out.entries().empty());
}

// --- Through the binary, on the committed sample (21 tensors) -------------------------------

BOOST_AUTO_TEST_CASE(split_by_tensor_count) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i", sample(),
                                 "-o", (out / "set.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_split_set(sample(), out.path(), shard_names("set", 3), {8, 8, 5});

    // A new -o without .gguf is a directory for the set, as for every writer of several files
    // (issue 16), and a note says so; -o DIR/ takes the input's name.
    cktest::TempDir bare, dir;
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i", sample(), "-o",
                            (bare / "set").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(file_names(bare.path()) == std::vector<std::string>{"set"});
    BOOST_TEST(file_names(bare / "set") == shard_names("micro-llama-q4_k_m", 3));
    BOOST_TEST(cktest::contains(r.err, "taken as a new directory for the split set"), r.err);
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i", sample(), "-o",
                            dir.path().string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(file_names(dir.path()) == shard_names("micro-llama-q4_k_m", 3));
    for (const std::string& name : file_names(dir.path()))
        BOOST_TEST(cktest::files_equal(dir / name, out / ("set" + name.substr(18))), name);
}

BOOST_AUTO_TEST_CASE(split_by_size_closes_a_shard_before_the_tensor_that_overflows_it) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_size=1M]", "-i", sample(), "-o",
                                 (out / "s.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::vector<std::string> names = file_names(out.path());
    BOOST_TEST_REQUIRE(names.size() >= 2u);
    std::vector<ParsedGguf> shards;
    std::vector<std::size_t> counts;
    for (const std::string& name : names) {
        shards.push_back(parse_gguf(out / name));
        counts.push_back(shards.back().tensors.size());
    }
    check_split_set(sample(), out.path(), shard_names("s", names.size()), counts);
    // Each shard's tensor data, padded to 32, fits in 10^6 bytes (the metadata is not
    // counted), and the next shard's first tensor would not have.
    for (std::size_t k = 0; k < shards.size(); ++k) {
        std::uint64_t bytes = 0;
        for (const ParsedTensor& t : shards[k].tensors) bytes += padded(t.nbytes);
        BOOST_TEST(bytes <= 1000000u);
        if (k + 1 < shards.size())
            BOOST_TEST(bytes + padded(shards[k + 1].tensors.front().nbytes) > 1000000u);
    }
}

BOOST_AUTO_TEST_CASE(one_shard_and_a_metadata_only_first_shard) {
    // A count above the model's still writes a set, of one: llama-gguf-split does the same.
    cktest::TempDir one;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=100]", "-i", sample(),
                                 "-o", (one / "m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_split_set(sample(), one.path(), shard_names("m", 1), {21});

    cktest::TempDir first;
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8,split_no_tensor_first]",
                            "-i", sample(), "-o", (first / "m.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_split_set(sample(), first.path(), shard_names("m", 4), {0, 8, 8, 5});
}

BOOST_AUTO_TEST_CASE(dry_run_lists_every_shard_and_writes_nothing) {
    cktest::TempDir out;
    const std::string target = (out / "sub" / "set.gguf").string();
    auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i", sample(),
                                 "-o", target, "--dry-run"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    for (const std::string& name : shard_names("set", 3))
        BOOST_TEST(contains(r.out, "output: " + (out / "sub" / name).string()), r.out);
    BOOST_TEST(out.entries().empty());

    r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i", sample(), "-o",
                            target, "--dry-run", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["outputs"].size() == 3u);
    BOOST_TEST(doc["outputs"][2].get<std::string>() ==
               (out / "sub" / shard_names("set", 3)[2]).string());
    BOOST_TEST(doc["reports"]["gguf.split"]["shards"][2]["tensors"].get<int>() == 5);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(bad_split_options_are_usage_errors_before_anything_is_written) {
    struct Case {
        std::string options, expected;
    };
    for (const Case& c : {
             Case{"split_max_size=0", "split_max_size=0: expected a size of at least 1 byte"},
             Case{"split_max_size=abc", "expected a size"},
             Case{"split_max_size=5X", "expected a size"},
             Case{"split_max_size=5Q", "5000000 (bytes), 500K, 2G (K, M, G, T: powers of 1000)"},
             Case{"split_max_size=1.5G", "llama-gguf-split would read the whole number alone"},
             Case{"split_max_size=0M", "at least 1 byte"},
             Case{"split_max_size=-5M", "expected a size"},
             Case{"split_max_size", "no size given"},
             Case{"split_max_size=5M,split_max_tensors=3", "not both"},
             Case{"split_max_tensors=0", "at least one tensor"},
             Case{"split_max_tensors=two", "non-negative integer"},
         }) {
        BOOST_TEST_CONTEXT(c.options) {
            cktest::TempDir out;
            auto r = cktest::run_ckhost({"--pipeline", "gguf:gguf[" + c.options + "]", "-i",
                                         sample(), "-o", (out / "new" / "m.gguf").string()});
            BOOST_TEST(r.exit_code == 2, r.err);
            BOOST_TEST(contains(r.err, c.expected), r.err);
            BOOST_TEST(out.entries().empty());
        }
    }
    // The reader takes none of them.
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf[split_max_tensors=2]:gguf", "-i", sample(), "-o", "never.gguf"});
    BOOST_TEST(r.exit_code == 2, r.err);
}

BOOST_AUTO_TEST_CASE(a_failure_or_an_existing_shard_leaves_nothing_behind) {
    // Fails at tensor 15: shard 1 is complete (and its file finished) by then, shard 2 half
    // written; neither may stay.
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--plugin-dir", cktest::test_plugin_dir().string(), "--pipeline",
                                 "gguf:testkit[fail_at=15]:gguf[split_max_tensors=8]", "-i",
                                 sample(), "-o", (out / "new" / "m.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(out.entries().empty());

    // One shard of the set exists already: refused without --force, before anything is
    // written; --force replaces it.
    cktest::write_file(out / "m-00002-of-00003.gguf", {1, 2, 3});
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i", sample(), "-o",
                            (out / "m.gguf").string()});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "m-00002-of-00003.gguf"), r.err);
    BOOST_TEST(file_names(out.path()) == std::vector<std::string>{"m-00002-of-00003.gguf"});
    r = cktest::run_ckhost({"--pipeline", "gguf:gguf[split_max_tensors=8]", "-i", sample(), "-o",
                            (out / "m.gguf").string(), "--force"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_split_set(sample(), out.path(), shard_names("m", 3), {8, 8, 5});
}

// Re-splitting in place into another number of shards would leave the old set's files beside
// the new set under the same prefix: refused, naming one, with or without --force, and nothing
// is written. The same count replaces the set (with --force), as before.
BOOST_AUTO_TEST_CASE(a_set_with_another_count_under_the_prefix_is_refused) {
    cktest::TempDir out;
    const std::string prefix = (out / "m").string();
    auto r = cktest::run_ckhost({"split", "--split-max-tensors", "8", sample(), prefix});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::vector<std::string> old_set = shard_names("m", 3);
    for (const char* force : {"", "--force"}) {
        std::vector<std::string> args = {"split", "--split-max-tensors", "16",
                                         (out / old_set[0]).string(), prefix};
        if (*force) args.push_back(force);
        r = cktest::run_ckhost(args);
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err,
                            "m-00001-of-00003.gguf: a shard of another split set with this "
                            "prefix (3 such files here); a new set of 2"),
                   r.err);
        BOOST_TEST(file_names(out.path()) == old_set);
    }
    r = cktest::run_ckhost(
        {"split", "--split-max-tensors", "8", (out / old_set[0]).string(), prefix, "--force"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_split_set(sample(), out.path(), old_set, {8, 8, 5});
}

BOOST_AUTO_TEST_CASE(batch_knows_every_shard) {
    // The second job writes a plain file named like the first job's second shard.
    cktest::TempDir dir;
    const std::string out = (dir / "out").string() + "/";
    std::ofstream(dir / "jobs.txt")
        << "gguf:gguf[split_max_tensors=8] " << sample() << " " << out << "m.gguf\n"
        << "gguf:gguf " << sample() << " " << out << "m-00002-of-00003.gguf\n";
    auto r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--json"});
    BOOST_TEST(r.exit_code == 1, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["jobs"][0]["status"].get<std::string>() == "ok");
    BOOST_TEST(doc["jobs"][0]["outputs"].size() == 3u);
    BOOST_TEST(doc["jobs"][1]["status"].get<std::string>() == "failed");
    BOOST_TEST(
        contains(doc["jobs"][1]["error"].get<std::string>(), "is also written by the job at"));
    // The job's recipe record (what a re-run compares) beside its first shard; then the set.
    BOOST_TEST(fs::remove(dir / "out" / "m-00001-of-00003.gguf.ckhost.json"));
    check_split_set(sample(), dir / "out", shard_names("m", 3), {8, 8, 5});
}

// --- The rules, in process --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(sizes_read_as_llama_gguf_split_reads_them) {
    using ckplugin::gguf::parse_split_size;
    BOOST_TEST(parse_split_size("500M") == 500'000'000u);
    BOOST_TEST(parse_split_size("2G") == 2'000'000'000u);
    BOOST_TEST(parse_split_size("1M") == 1'000'000u);
    BOOST_TEST(parse_split_size("4096G") == 4'096'000'000'000u);
    // The SDK's one reading of sizes (decision 0044), bare letters as llama-gguf-split reads M
    // and G: plain bytes, K, a lower-case letter, and units that say their base.
    BOOST_TEST(parse_split_size("5") == 5u);
    BOOST_TEST(parse_split_size("5000000") == 5'000'000u);
    BOOST_TEST(parse_split_size("5K") == 5'000u);
    BOOST_TEST(parse_split_size("5g") == 5'000'000'000u);
    BOOST_TEST(parse_split_size("2GB") == 2'000'000'000u);
    BOOST_TEST(parse_split_size("2GiB") == 2'147'483'648u);
    BOOST_TEST(parse_split_size("1.5GB") == 1'500'000'000u);
    // A fraction before a bare letter: llama-gguf-split would read 1.5G as 1G.
    for (const char* bad :
         {"", "0M", "M", "5X", "1.5G", " 5M", "+5M", "5 M", "99999999999999999999M"})
        BOOST_CHECK_EXCEPTION(parse_split_size(bad), ck::Error,
                              [](const ck::Error& e) { return e.kind() == ck::ErrorKind::usage; });
}

BOOST_AUTO_TEST_CASE(shard_boundaries) {
    using ckplugin::gguf::plan_shards;
    using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;
    auto ranges = [](const std::vector<ckplugin::gguf::ShardRange>& shards) {
        Ranges r;
        for (const auto& s : shards) r.emplace_back(s.begin, s.end);
        return r;
    };
    // 100, 60, 8 (padded to 32) and 1000 bytes.
    const std::vector<ck::TensorInfo> t = {f32_tensor("a", 25), f32_tensor("b", 15),
                                           f32_tensor("c", 2), f32_tensor("d", 250)};
    // Padded: 128, 64, 32, 1024. A shard may reach the size exactly.
    BOOST_TEST((ranges(plan_shards(t, SplitSettings{.max_bytes = 224})) == Ranges{{0, 3}, {3, 4}}));
    BOOST_TEST((ranges(plan_shards(t, SplitSettings{.max_bytes = 223})) ==
                Ranges{{0, 2}, {2, 3}, {3, 4}}));
    // A later tensor larger than the size gets a shard of its own; a first one is an error.
    BOOST_TEST((ranges(plan_shards(t, SplitSettings{.max_bytes = 200})) ==
                Ranges{{0, 2}, {2, 3}, {3, 4}}));
    BOOST_CHECK_EXCEPTION(plan_shards(t, SplitSettings{.max_bytes = 127}), ck::Error,
                          [](const ck::Error& e) {
                              return e.kind() == ck::ErrorKind::usage && contains(e.what(), "'a'");
                          });
    BOOST_TEST((ranges(plan_shards(t, SplitSettings{.max_tensors = 3})) == Ranges{{0, 3}, {3, 4}}));
    BOOST_TEST((ranges(plan_shards(t, SplitSettings{.max_tensors = 4})) == Ranges{{0, 4}}));
    BOOST_TEST((ranges(plan_shards(t, SplitSettings{.max_tensors = 1})) ==
                Ranges{{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
    BOOST_TEST((ranges(plan_shards(t, SplitSettings{.max_tensors = 2, .no_tensor_first = true})) ==
                Ranges{{0, 0}, {0, 2}, {2, 4}}));
    BOOST_TEST((ranges(plan_shards({}, SplitSettings{.max_tensors = 2})) == Ranges{{0, 0}}));
    // split.count is a u16.
    const std::vector<ck::TensorInfo> many(65536, f32_tensor("x", 1));
    BOOST_CHECK_THROW(plan_shards(many, SplitSettings{.max_tensors = 1}), ck::Error);
}

BOOST_AUTO_TEST_CASE(shard_metadata_ends_with_the_split_keys) {
    ck::Metadata model;
    model.set("general.architecture", ck::Value::of_string("llama"));
    model.set("split.count", ck::Value::scalar(ck::ValueType::u16, 0));  // a merged file's
    model.set("split.no", ck::Value::of_u32(7));
    model.set("general.name", ck::Value::of_string("m"));
    auto keys = [](const ck::Metadata& m) {
        std::vector<std::string> k;
        for (const auto& [key, value] : m) k.push_back(key);
        return k;
    };
    const ck::Metadata first = ckplugin::gguf::shard_metadata(model, 0, 3, 39);
    BOOST_TEST(keys(first) ==
               (std::vector<std::string>{"general.architecture", "general.name", "split.no",
                                         "split.tensors.count", "split.count"}));
    BOOST_TEST((first.find("split.no")->type() == ck::ValueType::u16));
    BOOST_TEST(first.find("split.no")->raw() == 0u);
    BOOST_TEST((first.find("split.tensors.count")->type() == ck::ValueType::i32));
    BOOST_TEST(first.find("split.tensors.count")->raw() == 39u);
    BOOST_TEST(first.find("split.count")->raw() == 3u);
    const ck::Metadata third = ckplugin::gguf::shard_metadata(model, 2, 3, 39);
    BOOST_TEST(keys(third) ==
               (std::vector<std::string>{"split.no", "split.tensors.count", "split.count"}));
    BOOST_TEST(third.find("split.no")->raw() == 2u);
}

BOOST_AUTO_TEST_CASE(shapes_names_and_prefixes) {
    using ckplugin::gguf::ggml_written_shape;
    using Shape = std::vector<std::int64_t>;
    BOOST_TEST((ggml_written_shape({4, 1}) == Shape{4}));
    BOOST_TEST((ggml_written_shape({2, 1, 3, 1}) == Shape{2, 1, 3}));
    BOOST_TEST((ggml_written_shape({1, 1}) == Shape{1}));
    BOOST_TEST((ggml_written_shape({}) == Shape{1}));
    BOOST_TEST((ggml_written_shape({4, 0}) == Shape{4, 0}));

    using ckplugin::gguf::shard_path;
    using ckplugin::gguf::split_prefix;
    BOOST_TEST(shard_path("d/m", 0, 3) == fs::path("d/m-00001-of-00003.gguf"));
    BOOST_TEST(shard_path("m", 11, 120) == fs::path("m-00012-of-00120.gguf"));
    BOOST_TEST(split_prefix("d/m.gguf", "in/x.gguf") == fs::path("d/m"));
    BOOST_TEST(split_prefix("d/m", "in/x.gguf") == fs::path("d/m"));
    BOOST_TEST(split_prefix("d/m.bin", "in/x.gguf") == fs::path("d/m.bin"));
    BOOST_TEST(split_prefix("d/", "in/x.gguf") == fs::path("d/x"));
    BOOST_TEST(split_prefix("d/", "in/x-00001-of-00004.gguf") == fs::path("d/x"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_gguf_split_write
