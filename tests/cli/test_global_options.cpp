// The global options (--plugin-dir DIR, --isa X, --quiet/-q, --json) before or after the
// command, for every command; and the usage errors around them.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_global_options {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

std::string plugin_dir() {
    return cktest::test_plugin_dir().string();
}
std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

json parse_json(const cktest::RunResult& r) {
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return json::parse(r.out);
}

std::vector<std::string> names_of_plugins(const json& doc) {
    std::vector<std::string> names;
    for (const auto& p : doc["plugins"]) names.push_back(p["name"].get<std::string>());
    return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(global_options)

BOOST_AUTO_TEST_CASE(plugins_takes_them_before_and_after) {
    // --plugin-dir before the command lists the test plugins, as after it does.
    auto before = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "plugins"});
    BOOST_TEST_REQUIRE(before.exit_code == 0, before.err);
    BOOST_TEST(contains(before.out, "testkit  (transform)"), before.out);
    auto after = cktest::run_ckhost({"plugins", "--plugin-dir", plugin_dir()});
    BOOST_TEST(after.out == before.out);

    // --json on either side, and the --dir=VALUE form.
    const json a =
        parse_json(cktest::run_ckhost({"--json", "--plugin-dir=" + plugin_dir(), "plugins"}));
    const json b =
        parse_json(cktest::run_ckhost({"plugins", "--plugin-dir", plugin_dir(), "--json"}));
    BOOST_TEST(has(names_of_plugins(a), "testkit"));
    BOOST_TEST(a == b);

    // Directories given before and after the command are searched in the order given.
    cktest::TempDir other;
    const json both =
        parse_json(cktest::run_ckhost({"-q", "--json", "--plugin-dir", plugin_dir(), "plugins",
                                       "--plugin-dir", other.path().string()}));
    BOOST_TEST_REQUIRE(both["search_path"].size() >= 2u);
    BOOST_TEST(both["search_path"][0].get<std::string>() == plugin_dir());
    BOOST_TEST(both["search_path"][1].get<std::string>() == other.path().string());

    // A value is the value even when it reads like a command or an option's name. (The
    // directories must exist: a --plugin-dir that does not is an error.)
    cktest::TempDir names;
    fs::create_directory(names / "plugins");
    fs::create_directory(names / "json");
    const fs::path was = fs::current_path();
    fs::current_path(names.path());
    const auto named_run = cktest::run_ckhost(
        {"--json", "--plugin-dir", "plugins", "--plugin-dir", "json", "plugins"});
    fs::current_path(was);
    const json named = parse_json(named_run);
    BOOST_TEST(named["search_path"][0].get<std::string>() == "plugins");
    BOOST_TEST(named["search_path"][1].get<std::string>() == "json");

    // --isa before the command reaches the plugins (the variant they chose).
    const json scalar = parse_json(cktest::run_ckhost({"--isa", "scalar", "--json", "plugins"}));
    for (const auto& p : scalar["plugins"])
        if (p.contains("kernel_variant"))
            BOOST_TEST(p["kernel_variant"].get<std::string>() == "scalar", p["name"]);
}

BOOST_AUTO_TEST_CASE(inspect_and_verify_take_them_before_and_after) {
    const json before = parse_json(cktest::run_ckhost({"--json", "inspect", sample()}));
    const json after = parse_json(cktest::run_ckhost({"inspect", sample(), "--json"}));
    BOOST_TEST(before == after);
    BOOST_TEST(before["format"].get<std::string>() == "gguf");
    const json isa =
        parse_json(cktest::run_ckhost({"--isa", "scalar", "--plugin-dir", plugin_dir(), "-q",
                                       "--json", "inspect", sample(), "--tensors"}));
    BOOST_TEST(isa["tensors"].size() == 21u);

    const json verified = parse_json(
        cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--json", "verify", sample()}));
    BOOST_TEST(verified["ok"].get<bool>());
    BOOST_TEST(verified == parse_json(cktest::run_ckhost({"verify", "--json", sample()})));
    auto text = cktest::run_ckhost({"--quiet", "verify", sample()});
    BOOST_TEST(text.exit_code == 0, text.err);
    BOOST_TEST(contains(text.out, ": OK (gguf, 21 tensors)"), text.out);
}

BOOST_AUTO_TEST_CASE(convert_takes_them_with_and_without_the_command) {
    cktest::TempDir out;
    // No command: still a conversion, with the global options first.
    auto plain = cktest::run_ckhost(
        {"--quiet", "--pipeline", "gguf:gguf", "-i", sample(), "-o", (out / "a.gguf").string()});
    BOOST_TEST(plain.exit_code == 0, plain.err);
    BOOST_TEST(plain.err.empty(), plain.err);
    BOOST_TEST(cktest::files_equal(sample(), out / "a.gguf"));

    // A stage from a --plugin-dir given before the command.
    auto before =
        cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--json", "convert", "--pipeline",
                            "gguf:testkit:gguf", sample(), (out / "b.gguf").string()});
    const json report = parse_json(before);
    BOOST_TEST(report.contains("outputs"), report.dump());
    BOOST_TEST(cktest::files_equal(sample(), out / "b.gguf"));
    auto no_command =
        cktest::run_ckhost({"--plugin-dir", plugin_dir(), "-q", "--pipeline", "gguf:testkit:gguf",
                            "-i", sample(), "-o", (out / "c.gguf").string()});
    BOOST_TEST(no_command.exit_code == 0, no_command.err);
    auto after = cktest::run_ckhost({"convert", "--pipeline", "gguf:testkit:gguf", sample(),
                                     (out / "d.gguf").string(), "--plugin-dir", plugin_dir(),
                                     "--json", "--isa", "scalar"});
    BOOST_TEST(parse_json(after).contains("outputs"));
    BOOST_TEST(cktest::files_equal(sample(), out / "d.gguf"));

    // Without the plugin directory the stage is unknown: the global really was used above.
    auto missing = cktest::run_ckhost({"--json", "convert", "--pipeline", "gguf:testkit:gguf",
                                       sample(), (out / "e.gguf").string()});
    BOOST_TEST(missing.exit_code == 2);
    BOOST_TEST(contains(missing.err, "unknown stage 'testkit'"), missing.err);
}

BOOST_AUTO_TEST_CASE(batch_takes_them_before_and_after) {
    cktest::TempDir dir;
    std::ofstream(dir / "jobs.txt")
        << "gguf:testkit:gguf " << sample() << " " << (dir / "a.gguf").string() << "\n";
    // --plugin-dir before the command reaches the batch's planning and its jobs.
    const json before = parse_json(cktest::run_ckhost(
        {"--plugin-dir", plugin_dir(), "--json", "batch", (dir / "jobs.txt").string()}));
    BOOST_TEST(before["summary"]["ok"].get<int>() == 1, before.dump());
    BOOST_TEST(fs::exists(dir / "a.gguf"));
    // After the command: the job is now up to date.
    const json after = parse_json(cktest::run_ckhost(
        {"batch", (dir / "jobs.txt").string(), "--plugin-dir", plugin_dir(), "--json"}));
    BOOST_TEST(after["jobs"][0]["reason"].get<std::string>() == "up to date", after.dump());
}

BOOST_AUTO_TEST_CASE(errors_stay_usage_errors) {
    struct Case {
        std::vector<std::string> args;
        std::string expected;
    };
    for (const Case& c : {
             Case{{"--json", "inspekt", sample()}, "did you mean 'inspect'"},
             Case{{"--plugin-dir", plugin_dir(), "bogus"}, "unknown command 'bogus'"},
             Case{{"--bogus", "plugins"}, "unrecognised option '--bogus'"},
             Case{{"--json", "plugins", "--bogus"}, "unrecognised option '--bogus'"},
             Case{{"--plugin-dir"}, "--plugin-dir"},
             Case{{"--isa", "sse9", "plugins"}, "--isa sse9: expected " + cktest::isa_choices},
             Case{{"--isa", "scalar", "plugins", "--isa", "avx2"}, "--isa"},
             Case{{"--json", "inspect"}, "missing FILE"},
             Case{{"--quiet", "verify"}, "missing FILE"},
             Case{{"--json", "batch"}, "missing JOBS"},
             Case{{"--json"}, "missing --pipeline"},
             Case{{"--plugin-dir", plugin_dir()}, "missing --pipeline"},
             Case{{"--isa", "--json", "plugins"}, "expected " + cktest::isa_choices},
             Case{{"--json", "plugins", "extra"}, "this command takes no arguments, got 'extra'"},
             Case{{"--quiet", "--pipeline", "gguf:gguf", "-i", sample()}, "missing output"},
         }) {
        auto r = cktest::run_ckhost(c.args);
        BOOST_TEST(r.exit_code == 2, c.expected << ": " << r.err);
        BOOST_TEST(contains(r.err, c.expected), c.expected << ": " << r.err);
        // With --json the same error is a document on stdout (docs/json.md); else stdout is
        // empty.
        if (std::find(c.args.begin(), c.args.end(), "--json") == c.args.end()) {
            BOOST_TEST(r.out.empty(), r.out);
            continue;
        }
        const json doc = json::parse(r.out, nullptr, false);
        BOOST_TEST_REQUIRE(doc.is_object(), c.expected << ": " << r.out);
        BOOST_TEST(doc["ok"] == false, r.out);
        BOOST_TEST(doc["error"]["exit_code"] == 2, r.out);
        BOOST_TEST(contains(doc["error"]["text"].get<std::string>(), c.expected), r.out);
    }
}

BOOST_AUTO_TEST_CASE(help_and_version_still_work) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"},
                                                 {"-h"},
                                                 {"help"},
                                                 {"--json", "--help"},
                                                 {"--plugin-dir", plugin_dir(), "help"}}) {
        auto r = cktest::run_ckhost(args);
        BOOST_TEST(r.exit_code == 0, args.front() << ": " << r.err);
        BOOST_TEST(contains(r.out, "Global options, before or after the command"), r.out);
    }
    auto version = cktest::run_ckhost({"-q", "--version"});
    BOOST_TEST(version.exit_code == 0);
    BOOST_TEST(contains(version.out, "ckhost "), version.out);
    // A command's own help, with the global options on either side.
    auto plugins = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "plugins", "--help"});
    BOOST_TEST(plugins.exit_code == 0, plugins.err);
    BOOST_TEST(contains(plugins.out, "usage: ckhost plugins"), plugins.out);
    auto inspect = cktest::run_ckhost({"--json", "inspect", "-h"});
    BOOST_TEST(inspect.exit_code == 0, inspect.err);
    BOOST_TEST(contains(inspect.out, "usage: ckhost inspect"), inspect.out);
}

// --max-memory reads sizes as split_max_size does (decision 0044): bytes, K/M/G as powers of
// 1024 (memory), KB/MB/GB as powers of 1000, KiB/MiB/GiB as powers of 1024.
BOOST_AUTO_TEST_CASE(max_memory_takes_bytes_and_both_unit_families) {
    struct Case {
        std::string given;
        std::uint64_t bytes;
    };
    for (const Case& c : {Case{"5000000", 5'000'000}, Case{"2K", 2048}, Case{"2KB", 2000},
                          Case{"2KiB", 2048}, Case{"1.5MB", 1'500'000}, Case{"3m", 3u << 20}}) {
        cktest::TempDir out;
        const json doc =
            parse_json(cktest::run_ckhost({"--max-memory", c.given, "--pipeline", "gguf:gguf", "-i",
                                           sample(), "-o", (out / "o.gguf").string(), "--json"}));
        BOOST_TEST(doc["compute_ahead"]["max_memory"].get<std::uint64_t>() == c.bytes, c.given);
    }
    auto r = cktest::run_ckhost({"plugins", "--max-memory", "2X"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err,
                        "--max-memory 2X: expected a size of at least 1 byte, such as "
                        "5000000 (bytes), 500K, 2G (K, M, G, T: powers of 1024), 2GB"),
               r.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_global_options
