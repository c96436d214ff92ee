// The --json contract (issue 16, docs/json.md): a schema version on every document, byte counts
// that are the bytes written, dropped tensors listed, typed fields, and an error document on
// stdout with the same exit code when a command fails. tests/json/validate_json.py checks the
// same outputs against docs/schema/; these check what a schema cannot: that the numbers are true.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_json_contract {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

json parse(const cktest::RunResult& r) {
    const json doc = json::parse(r.out, nullptr, false);
    BOOST_TEST_REQUIRE(doc.is_object(), "stdout is not one JSON object: " << r.out << r.err);
    return doc;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(json_contract)

// bytes_out is what the files hold (weights.bump with its header, dtype table and zero position
// embeddings, and config.json), not the tensor bytes the writer was given.
BOOST_AUTO_TEST_CASE(bytes_out_is_the_bytes_written_and_dropped_tensors_are_listed) {
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump", "-i", sample(), "-o",
                                 (dir / "out/").string(), "--json", "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = parse(r);
    BOOST_TEST(doc["schema"] == 1);
    BOOST_TEST(doc["command"] == "convert");
    BOOST_TEST(doc["ok"] == true);
    const std::uint64_t written =
        fs::file_size(dir / "out/weights.bump") + fs::file_size(dir / "out/config.json");
    BOOST_TEST(doc["bytes_out"].get<std::uint64_t>() == written);
    BOOST_TEST(doc["bytes_out"].get<std::uint64_t>() ==
               1642404u + fs::file_size(dir / "out/config.json"));
    BOOST_TEST(doc["outputs"].size() == 2u);
    // The sample's untied output.weight has no slot in bump v3: the writer leaves it out.
    BOOST_TEST(doc["plan"]["dropped"] == json::array({"output.weight"}), doc["plan"].dump());

    // A copy drops nothing, and its bytes_out is the copy's size.
    auto copy = cktest::run_ckhost(
        {"--pipeline", "gguf:gguf", "-i", sample(), "-o", (dir / "c.gguf").string(), "--json"});
    BOOST_TEST_REQUIRE(copy.exit_code == 0, copy.err);
    const json c = parse(copy);
    BOOST_TEST(c["bytes_out"].get<std::uint64_t>() == fs::file_size(dir / "c.gguf"));
    BOOST_TEST(c["plan"]["dropped"].empty(), c["plan"].dump());
}

// Failures print {"ok": false, "error": {...}} on stdout, with the exit code of the failure;
// without --json stdout stays empty.
BOOST_AUTO_TEST_CASE(failures_are_error_documents_with_the_same_exit_code) {
    cktest::TempDir dir;
    struct Case {
        std::vector<std::string> args;
        int exit_code;
        std::string kind;
        std::string message;
    };
    const std::string missing = (dir / "missing.gguf").string();
    for (const Case& c : {
             Case{{"--pipeline", "gguf:gguf", "-i", missing, "-o", (dir / "x.gguf").string()},
                  1,
                  "input",
                  "cannot open"},
             Case{{"--pipeline", "gguf:gguff", "-i", sample(), "-o", (dir / "x.gguf").string()},
                  2,
                  "usage",
                  "did you mean 'gguf'"},
             Case{
                 {"--pipeline", "gguf:bump[strict=2]", "-i", sample(), "-o", (dir / "b/").string()},
                 2,
                 "usage",
                 "option strict=2: expected 1, 0, true, false, yes or no"},
             Case{{"inspect", missing}, 1, "input", "cannot open"},
             Case{{"verify", missing}, 1, "input", "cannot open"},
             Case{{"inspect", sample(), "--kv", "general.nam"}, 1, "input", "no such key"},
             Case{{"batch", missing}, 1, "input", ""},
             Case{{"plugins", "--plugin-dir", missing}, 2, "usage", "no such directory"},
             Case{{"inspect", sample(), "--josn"}, 2, "usage", "did you mean '--json'"},
         }) {
        std::vector<std::string> args = c.args;
        auto plain = cktest::run_ckhost(args);
        BOOST_TEST(plain.exit_code == c.exit_code, plain.err);
        BOOST_TEST(plain.out.empty(), plain.out);
        args.push_back("--json");
        auto r = cktest::run_ckhost(args);
        BOOST_TEST(r.exit_code == c.exit_code, r.err);
        const json doc = parse(r);
        BOOST_TEST(doc["schema"] == 1, r.out);
        BOOST_TEST(doc["ok"] == false, r.out);
        const json& e = doc["error"];
        BOOST_TEST(e["exit_code"] == c.exit_code, r.out);
        BOOST_TEST(e["kind"] == c.kind, r.out);
        BOOST_TEST(contains(e["text"].get<std::string>(), c.message), r.out);
        // The text is what stderr says after "ckhost: error: ".
        BOOST_TEST(contains(r.err, "ckhost: error: " + e["text"].get<std::string>()), r.err);
    }
    // The file a failure is about is a field of its own.
    auto r = cktest::run_ckhost({"inspect", missing, "--json"});
    BOOST_TEST(parse(r)["error"]["file"] == missing, r.out);
    BOOST_TEST(parse(r)["command"] == "inspect", r.out);
}

// inspect's facts are typed fields with snake_case keys; plugins' kinds and choices are lists.
BOOST_AUTO_TEST_CASE(facts_kinds_and_choices_are_typed) {
    auto r = cktest::run_ckhost({"inspect", sample(), "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = parse(r);
    BOOST_TEST(doc["schema"] == 1);
    const json& facts = doc["facts"];
    BOOST_TEST(facts["version"] == 3, facts.dump());
    BOOST_TEST(facts["alignment"] == 32, facts.dump());
    BOOST_TEST(facts["data_start"].is_number_unsigned(), facts.dump());
    BOOST_TEST(facts["file_size"] == fs::file_size(cktest::sample_model()), facts.dump());
    BOOST_TEST(facts["byte_order"] == "little-endian", facts.dump());
    for (const auto& [key, value] : facts.items())
        BOOST_TEST(key.find(' ') == std::string::npos, key);

    auto v = cktest::run_ckhost({"verify", sample(), "--json"});
    BOOST_TEST_REQUIRE(v.exit_code == 0, v.err);
    BOOST_TEST(parse(v)["facts"] == facts);
    BOOST_TEST(parse(v)["command"] == "verify");

    auto p = cktest::run_ckhost({"plugins", "--json"});
    BOOST_TEST_REQUIRE(p.exit_code == 0, p.err);
    const json plugins = parse(p);
    BOOST_TEST(plugins["schema"] == 1);
    bool seen = false;
    for (const json& plugin : plugins["plugins"]) {
        if (plugin["name"] != "dequant") continue;
        seen = true;
        BOOST_TEST(plugin["kinds"] == json::array({"transform"}), plugin.dump());
        for (const json& o : plugin["options"]) {
            BOOST_TEST(o["stages"].is_array(), o.dump());
            if (o["name"] == "to") {
                BOOST_TEST(o["choices"] == json::array({"f32", "f16", "bf16"}), o.dump());
                BOOST_TEST(o["default"] == "f32", o.dump());
            }
            if (o["name"] == "only") {
                BOOST_TEST(o["choices"].is_null(), o.dump());
                BOOST_TEST(o["default"].is_null(), o.dump());
            }
        }
    }
    BOOST_TEST(seen);
}

// A batch's document has the version, ok false when a job failed, and each job's own report:
// the convert document, or the failed job's error document.
BOOST_AUTO_TEST_CASE(batch_reports_carry_the_contract) {
    cktest::TempDir dir;
    std::ofstream(dir / "jobs.txt")
        << "gguf:gguf " << sample() << " " << (dir / "a.gguf").string() << "\n"
        << "gguf:gguf " << (dir / "missing.gguf").string() << " " << (dir / "b.gguf").string()
        << "\n";
    auto r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--json", "-q"});
    BOOST_TEST(r.exit_code == 1, r.err);
    const json doc = parse(r);
    BOOST_TEST(doc["schema"] == 1);
    BOOST_TEST(doc["ok"] == false);
    BOOST_TEST_REQUIRE(doc["jobs"].size() == 2u);
    BOOST_TEST(doc["jobs"][0]["report"]["schema"] == 1, doc.dump());
    BOOST_TEST(doc["jobs"][0]["report"]["bytes_out"] == fs::file_size(dir / "a.gguf"));
    const json& failed = doc["jobs"][1];
    BOOST_TEST(failed["status"] == "failed", failed.dump());
    if (failed.contains("report")) BOOST_TEST(failed["report"]["ok"] == false, failed.dump());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_json_contract
