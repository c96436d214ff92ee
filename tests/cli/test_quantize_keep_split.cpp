// `ckhost quantize --keep-split` against llama-quantize --keep-split's own sets. The inputs are
// cut from ../shared/testdata's micro-llama by `ckhost split` (llama-gguf-split's files, byte for
// byte), and every output shard's SHA-256 must be the one of llama-quantize's shard, listed in
// tests/data/quantize-keep-split/SHA256SUMS (its README says how they were made; the shards
// themselves are not kept). Then the refusals: split_counts that do not add up or cannot be
// written, --keep-split with --prune-layers or without a file to name: exit code, message,
// nothing left behind.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/output.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_quantize_keep_split {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;

namespace {

fs::path references() {
    return cktest::test_data() / "quantize-keep-split";
}

// SHA256SUMS as CASE/FILE -> digest ("DIGEST  CASE/FILE" a line, as sha256sum writes it).
std::map<std::string, std::string> reference_digests() {
    std::ifstream in(references() / "SHA256SUMS");
    BOOST_TEST_REQUIRE(in.good(), "tests/data/quantize-keep-split/SHA256SUMS is missing");
    std::map<std::string, std::string> digests;
    for (std::string digest, name; in >> digest >> name;) digests[name] = digest;
    return digests;
}

// Every file of `dir`/CASE listed as CASE/STEM... in the references exists with the listed
// digest, and `dir`/CASE holds no other file of that stem.
void check_against_references(const fs::path& dir, const std::string& case_and_stem) {
    const std::string case_name = case_and_stem.substr(0, case_and_stem.find('/'));
    std::size_t listed = 0;
    for (const auto& [name, digest] : reference_digests()) {
        if (!name.starts_with(case_and_stem)) continue;
        ++listed;
        BOOST_TEST_CONTEXT(name) {
            BOOST_TEST_REQUIRE(fs::exists(dir / name), "not written");
            BOOST_TEST(cktest::sha256_of_file(dir / name) == digest,
                       "differs from llama-quantize's file");
        }
    }
    BOOST_TEST_REQUIRE(listed > 0u, case_and_stem << ": no reference listed");
    const std::string stem = fs::path(case_and_stem).filename().string();
    std::size_t written = 0;
    for (const auto& entry : fs::directory_iterator(dir / case_name))
        written += entry.path().filename().string().starts_with(stem);
    BOOST_TEST(written == listed, case_and_stem << ": other shards written");
}

// `ckhost split --split-max-tensors 10 [FLAGS] INPUT DIR/CASE/in`.
void split_input(const fs::path& input, const fs::path& dir, const std::string& case_name,
                 const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"-q", "split", "--split-max-tensors", "10"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {input.string(), (dir / case_name / "in").string()});
    const auto r = cktest::run_ckhost(args);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
}

// `ckhost quantize --keep-split FLAGS INPUT OUTPUT TYPE 1`, run inside `folder` (llama-quantize
// records its --imatrix argument as given, and the reference was made with a bare name).
cktest::RunResult run_keep_split(const fs::path& folder, const std::vector<std::string>& flags,
                                 const fs::path& input, const fs::path& output,
                                 const std::string& type) {
    std::vector<std::string> args = {"-C", folder.string(), cktest::ckhost_binary().string(),
                                     "-q", "quantize",      "--keep-split"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {input.string(), output.string(), type, "1"});
    return cktest::run_program("env", args);
}

std::optional<long> layer_of(const std::string& name) {
    if (!name.starts_with("blk.")) return std::nullopt;
    return std::stol(name.substr(4));
}

// The tensors of `source` with its layers last to first (reverse_layers.py's order): each
// layer's tensors keep their order, the layers go where the first layer's tensors were, the
// other tensors keep their places. llama-quantize --keep-split chooses the types in this order.
void write_reversed_layers(const fs::path& source, const fs::path& target) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ck::ModelHeader header = reader.open(source);
    std::vector<std::size_t> layered, order;
    for (std::size_t i = 0; i < header.tensors.size(); ++i)
        if (layer_of(header.tensors[i].name)) layered.push_back(i);
    BOOST_TEST_REQUIRE(!layered.empty());
    std::stable_sort(layered.begin(), layered.end(), [&](std::size_t a, std::size_t b) {
        return *layer_of(header.tensors[a].name) > *layer_of(header.tensors[b].name);
    });
    const std::size_t first = *std::min_element(layered.begin(), layered.end());
    for (std::size_t i = 0; i < first; ++i) order.push_back(i);
    order.insert(order.end(), layered.begin(), layered.end());
    for (std::size_t i = first; i < header.tensors.size(); ++i)
        if (!layer_of(header.tensors[i].name)) order.push_back(i);
    ck::ModelHeader reversed = header;
    for (std::size_t i = 0; i < order.size(); ++i) reversed.tensors[i] = header.tensors[order[i]];
    ckplugin::gguf::GgufWriter writer(context);
    writer.prepare(reversed, target);
    ck::OutputSet out(false);
    writer.begin(out);
    for (std::size_t i = 0; i < order.size(); ++i) writer.write(i, reader.tensor(order[i]));
    writer.finish();
    out.commit();
}

// A usage error: exit 2, the message naming the problem, nothing written in `dir`.
void check_refused(const std::vector<std::string>& args, const std::string& message,
                   const cktest::TempDir& dir) {
    const auto r = cktest::run_ckhost(args);
    BOOST_TEST(r.exit_code == 2, args[1] << ": " << r.err);
    BOOST_TEST(contains(r.err, message), r.err);
    BOOST_TEST(dir.entries().empty(), args[1] << " left files behind");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(quantize_keep_split)

// One output shard per input shard, each llama-quantize's byte for byte: a set of 3, the same
// with an importance matrix and with an override, a set whose first shard holds no tensor, one
// file (PREFIX-00001-of-00001.gguf, no split keys), and a model whose layers run last to first
// (the types follow the input's order).
BOOST_AUTO_TEST_CASE(keep_split_writes_llama_quantizes_shards,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path model = *cktest::shared_data() / "micro-llama-f16.gguf";
    const fs::path imatrix_dir = *cktest::shared_data() / "imatrix";
    cktest::TempDir temp;
    const fs::path dir = temp.path();
    split_input(model, dir, "split");
    check_against_references(dir, "split/in");
    split_input(model, dir, "no-tensor-first", {"--no-tensor-first-split"});
    check_against_references(dir, "no-tensor-first/in");
    fs::create_directory(dir / "reversed");
    write_reversed_layers(model, dir / "reversed" / "rev.gguf");
    check_against_references(dir, "reversed/rev.gguf");
    split_input(dir / "reversed" / "rev.gguf", dir, "reversed");

    struct Case {
        std::string name;
        std::vector<std::string> flags;
        fs::path input;
        std::string type;
    };
    const fs::path set = dir / "split" / "in-00001-of-00003.gguf";
    const Case cases[] = {
        {"q4_k_m", {}, set, "Q4_K_M"},
        {"iq2_xxs", {"--imatrix", "micro-llama-f16.imatrix.gguf"}, set, "IQ2_XXS"},
        {"override", {"--override-kv", "general.name=str:Keep Split"}, set, "Q8_0"},
        {"no-tensor-first", {}, dir / "no-tensor-first" / "in-00001-of-00004.gguf", "Q4_K_M"},
        {"one-file", {}, model, "Q4_K_M"},
        {"reversed", {}, dir / "reversed" / "in-00001-of-00003.gguf", "Q4_K_M"},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            fs::create_directories(dir / c.name);
            const auto r =
                run_keep_split(imatrix_dir, c.flags, c.input, dir / c.name / "out.gguf", c.type);
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            check_against_references(dir, c.name + "/out");
        }
    }
}

// --dry-run names every shard, with the input's tensor counts, and writes none.
BOOST_AUTO_TEST_CASE(dry_run_lists_the_shards, *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path model = *cktest::shared_data() / "micro-llama-f16.gguf";
    cktest::TempDir input;
    split_input(model, input.path(), "split");
    cktest::TempDir dir;
    const auto r = cktest::run_ckhost({"quantize", "--keep-split", "--dry-run",
                                       (input / "split" / "in-00002-of-00003.gguf").string(),
                                       (dir / "out").string(), "Q4_K_M"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string said = r.out + r.err;
    BOOST_TEST(contains(said, "a split set of 3 files, with 10, 10 and 1 tensors"), said);
    for (const char* shard : {"out-00001-of-00003.gguf", "out-00003-of-00003.gguf"})
        BOOST_TEST(contains(said, shard), said);
    BOOST_TEST(dir.entries().empty());
}

// Without --keep-split a set is one model: llama-quantize writes the file it writes from the
// unsplit model, without the set's split keys (checked with cmp by hand), and so does ckhost.
BOOST_AUTO_TEST_CASE(without_keep_split_a_set_gives_one_file,
                     *utf::precondition(cktest::SharedDataPresent())) {
    const fs::path root = *cktest::shared_data();
    cktest::TempDir dir;
    split_input(root / "micro-llama-f16.gguf", dir.path(), "split");
    const auto r =
        cktest::run_ckhost({"-q", "quantize", (dir / "split" / "in-00001-of-00003.gguf").string(),
                            (dir / "one.gguf").string(), "Q4_K_M"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(
        cktest::files_equal(dir / "one.gguf", root / "quant" / "micro-llama-f16.q4_k_m.gguf"));
}

BOOST_AUTO_TEST_CASE(refusals_name_the_problem_and_write_nothing) {
    const std::string input = cktest::sample_model().string();
    cktest::TempDir dir;
    const std::string out = (dir / "o.gguf").string();
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const std::size_t n = reader.open(input).tensors.size();
    const auto counts = [&](const std::string& value) {
        return std::vector<std::string>{"convert", "--pipeline",
                                        "gguf:gguf[split_counts=" + value + "]", input, out};
    };
    const std::string short_by_one = "1 " + std::to_string(n - 2);
    check_refused(counts(short_by_one),
                  "the shards' tensor counts sum to " + std::to_string(n - 1) + " (" + "1 + " +
                      std::to_string(n - 2) + "), but the model has " + std::to_string(n) +
                      " tensors",
                  dir);
    check_refused(counts("1 " + std::to_string(n)), "sum to " + std::to_string(n + 1), dir);
    check_refused(counts("1 0 " + std::to_string(n - 1)),
                  "shard 2 would hold no tensor; only the first shard may", dir);
    check_refused(counts("1 x"), "'x' is not a tensor count", dir);
    check_refused(counts(" "), "no count given", dir);
    check_refused(
        {"convert", "--pipeline", "gguf:gguf[split_counts=1,split_max_tensors=2]", input, out},
        "give split_counts or split_max_tensors, not both", dir);
    check_refused({"quantize", "--keep-split", "--allow-requantize", "--prune-layers", "1", input,
                   out, "q8_0"},
                  "--keep-split with --prune-layers is not taken", dir);
    check_refused({"quantize", "--keep-split", "--allow-requantize", input, "-", "q8_0"},
                  "--keep-split with OUTPUT -", dir);
    check_refused(
        {"quantize", "--keep-split", "--allow-requantize", input, (dir / "sub/").string(), "q8_0"},
        "names no file", dir);
    check_refused({"quantize", "--keep-split", "--allow-requantize", "-", out, "q8_0"},
                  "--keep-split with INPUT -", dir);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_quantize_keep_split
