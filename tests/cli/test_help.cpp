// Help where it matters (issue 28): `ckhost help STAGE` shows the stage's options with their
// defaults and choices as its descriptor gives them (`ckhost plugins --json` is the reference)
// and examples that plan; a name that is both a command and a stage shows both; each command's
// help lists the global options it uses and no other; `ckhost help` starts with the common goals.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_help {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using nlohmann::json;

namespace {

// The loaded plugins as `ckhost plugins --json` describes them.
std::vector<json> loaded_plugins() {
    auto r = cktest::run_ckhost({"plugins", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    std::vector<json> plugins;
    for (const json& p : doc["plugins"])
        if (p["loaded"].get<bool>()) plugins.push_back(p);
    BOOST_TEST_REQUIRE(plugins.size() >= 10u);
    return plugins;
}

// One example of a stage's help: `ckhost --pipeline P -i IN -o OUT`.
struct Example {
    std::string pipeline, input, output;
};

std::vector<Example> examples_in(const std::string& help) {
    std::vector<Example> examples;
    const std::regex line(R"(^  ckhost --pipeline ('[^']*'|\S+) -i (\S+) -o (\S+)$)");
    std::istringstream lines(help);
    for (std::string text; std::getline(lines, text);)
        if (std::smatch m; std::regex_match(text, m, line)) {
            std::string pipeline = m[1];
            if (pipeline.front() == '\'') pipeline = pipeline.substr(1, pipeline.size() - 2);
            examples.push_back({pipeline, m[2], m[3]});
        }
    return examples;
}

// A real file for an example's INPUT, by its name: model-TYPE.gguf is the shared micro-llama
// of that type, any other .gguf the sample; a folder is the shared Hugging Face checkpoint; the
// other formats are made here by ckhost.
fs::path input_for(const std::string& name, const cktest::TempDir& dir) {
    const fs::path shared = *cktest::shared_data();
    if (fs::path(name).is_absolute()) return name;  // chosen by with_real_adapters
    const auto make = [&](const std::string& pipeline, const fs::path& out) {
        if (!fs::exists(out)) {
            // safetensors has no dtype for the sample's K-quants: it gets the F16 model.
            const fs::path from = out.extension() == ".safetensors"
                                      ? shared / "micro-llama-f16.gguf"
                                      : cktest::sample_model();
            auto r = cktest::run_ckhost(
                {"-q", "--pipeline", pipeline, "-i", from.string(), "-o", out.string()});
            BOOST_TEST_REQUIRE(r.exit_code == 0, pipeline << ": " << r.err);
        }
        return out;
    };
    if (name.ends_with("/")) return shared / "hf" / "llama-bf16";
    if (name.ends_with(".safetensors")) return make("gguf:safetensors", dir / "made.safetensors");
    if (name.ends_with(".gguflite")) return make("gguf:gguflite", dir / "made.gguflite");
    if (name.ends_with(".bump")) {
        make("gguf:headpack:bump", dir / "made-bump/");
        return dir / "made-bump" / "weights.bump";
    }
    if (const auto dash = name.rfind('-'); dash != std::string::npos && name.ends_with(".gguf")) {
        const fs::path typed = shared / ("micro-llama" + name.substr(dash));
        if (fs::exists(typed)) return typed;
    }
    return cktest::sample_model();
}

// lora's examples name adapter files and folders: each becomes the shared llama adapter (a
// GGUF file, or its PEFT folder), and a GGUF input its base (a folder already is: the shared
// checkpoint).
Example with_real_adapters(Example e) {
    const fs::path lora = *cktest::shared_data() / "lora" / "llama-bf16-lora-all-r4.f32.gguf";
    if (e.pipeline.find("adapter=") == std::string::npos || !fs::exists(lora)) return e;
    // An item of adapter=, alone or in a {a,b} list: a file name, or a folder's ending in '/'.
    const std::string item = R"((adapter=\{?|,))";
    const fs::path folder = lora.parent_path() / "llama-bf16-lora-all-r4";
    e.pipeline =
        std::regex_replace(e.pipeline, std::regex(item + R"([\w.-]+\.gguf)"), "$1" + lora.string());
    e.pipeline =
        std::regex_replace(e.pipeline, std::regex(item + R"([\w.-]+/)"), "$1" + folder.string());
    if (e.input.ends_with(".gguf"))
        e.input = (*cktest::shared_data() / "hf" / "llama-bf16.f16.gguf").string();
    return e;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(help)

// Every option of every stage, with its default and each of its choices, as the descriptor has
// them; a plugin's several kinds each get their place in a pipeline.
BOOST_AUTO_TEST_CASE(stage_help_shows_every_option_default_and_choice) {
    for (const json& plugin : loaded_plugins()) {
        const std::string name = plugin["name"];
        BOOST_TEST_CONTEXT(name) {
            auto r = cktest::run_ckhost({"help", name});
            BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
            BOOST_TEST(contains(r.out, "stage " + name + " ("), r.out);
            BOOST_TEST(contains(r.out, plugin["path"].get<std::string>()), r.out);
            for (const json& kind : plugin["kinds"])
                BOOST_TEST(contains(r.out, "  " + kind.get<std::string>() + ": "), r.out);
            for (const json& option : plugin["options"]) {
                const std::string o = option["name"];
                BOOST_TEST((contains(r.out, "\n  " + o + "=") || contains(r.out, "\n  " + o + "[")),
                           o);
                if (option["choices"].is_array())
                    for (const json& choice : option["choices"])
                        BOOST_TEST(contains(r.out, choice.get<std::string>()), o << ": " << choice);
                const bool is_switch =
                    option["choices"].is_null() && option["default"] == json("0");
                if (option["default"].is_string() && !is_switch)
                    BOOST_TEST(contains(r.out, "(default " + option["default"].get<std::string>()),
                               o);
            }
            BOOST_TEST(examples_in(r.out).size() >= 2u, r.out);
        }
    }
}

// The examples a stage's help gives are conversions that plan on real files of their kind.
BOOST_AUTO_TEST_CASE(stage_examples_plan, *utf::precondition(cktest::SharedDataPresent())) {
    cktest::TempDir dir;
    for (const json& plugin : loaded_plugins()) {
        auto r = cktest::run_ckhost({"help", plugin["name"].get<std::string>()});
        for (const Example& example : examples_in(r.out)) {
            const Example e = with_real_adapters(example);
            BOOST_TEST_CONTEXT(e.pipeline << " " << e.input << " " << e.output) {
                const std::string out = (dir / "out").string() + "/" + e.output;
                auto plan =
                    cktest::run_ckhost({"--pipeline", e.pipeline, "-i",
                                        input_for(e.input, dir).string(), "-o", out, "--dry-run"});
                BOOST_TEST(plan.exit_code == 0, plan.err);
            }
        }
    }
    BOOST_TEST(!fs::exists(dir / "out"));
}

// quantize is a command and a stage: its help is the command's, then the stage's.
BOOST_AUTO_TEST_CASE(a_command_and_a_stage_of_one_name_show_both) {
    auto both = cktest::run_ckhost({"help", "quantize"});
    BOOST_TEST_REQUIRE(both.exit_code == 0, both.err);
    auto command = cktest::run_ckhost({"quantize", "--help"});
    BOOST_TEST_REQUIRE(command.exit_code == 0, command.err);
    BOOST_TEST(both.out.starts_with(command.out), both.out);
    BOOST_TEST(!contains(command.out, "stage quantize"), command.out);
    const std::string stage = both.out.substr(command.out.size());
    BOOST_TEST(contains(stage, "stage quantize (transform)"), stage);
    BOOST_TEST(contains(stage, "  mix=VALUE"), stage);
    BOOST_TEST(contains(stage, "  to=q4_0|q4_1|"), stage);
    BOOST_TEST(contains(stage, "(default q8_0)"), stage);
    BOOST_TEST(contains(stage, "  pure[=1] (a switch, off unless given)"), stage);
    // A stage that is no command: the stage's help alone.
    auto bump = cktest::run_ckhost({"help", "bump"});
    BOOST_TEST_REQUIRE(bump.exit_code == 0, bump.err);
    BOOST_TEST(bump.out.starts_with("stage bump (reader, writer)"), bump.out);
    BOOST_TEST(contains(bump.out, "  version=3|4 (default 3) [writer]"), bump.out);
    // Plugins from --plugin-dir, on either side of the topic.
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--plugin-dir", cktest::test_plugin_dir().string(), "help",
                                   "testkit"},
          {"help", "testkit", "--plugin-dir", cktest::test_plugin_dir().string()}}) {
        auto testkit = cktest::run_ckhost(args);
        BOOST_TEST(testkit.exit_code == 0, testkit.err);
        BOOST_TEST(testkit.out.starts_with("stage testkit (transform)"), testkit.out);
    }
}

// A name that is neither: exit 2, the closest command or stage, and both lists.
BOOST_AUTO_TEST_CASE(an_unknown_topic_names_the_closest) {
    auto r = cktest::run_ckhost({"help", "gguflit"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "help gguflit: unknown command; did you mean 'gguflite'?"), r.err);
    BOOST_TEST(contains(r.err, "; stages: "), r.err);
    BOOST_TEST(r.out.empty(), r.out);
    r = cktest::run_ckhost({"help", "quantise"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "did you mean 'quantize'?"), r.err);
    r = cktest::run_ckhost({"help", "bump", "--plugin-dir", "/no/such/dir"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "no such directory"), r.err);
    BOOST_TEST(r.out.empty(), r.out);
}

// Each command's help lists the global options that change what it does, and no other; the
// others are still accepted, and change nothing.
BOOST_AUTO_TEST_CASE(command_help_lists_only_the_global_options_it_uses) {
    const std::set<std::string> every = {"--plugin-dir", "--isa",   "--threads", "--max-memory",
                                         "--no-sync",    "--quiet", "--json"};
    const std::vector<std::pair<std::string, std::set<std::string>>> uses = {
        {"convert", every},
        {"quantize", every},
        {"split", every},
        {"merge", every},
        {"batch", every},
        {"inspect", {"--plugin-dir", "--json"}},
        {"verify", {"--plugin-dir", "--json"}},
        {"compare", {"--plugin-dir", "--isa", "--threads", "--no-sync", "--quiet", "--json"}},
        {"plugins", {"--plugin-dir", "--isa", "--threads", "--json"}},
        {"batch-report", {"--no-sync", "--json"}},
        {"completion", {"--plugin-dir"}},
    };
    for (const auto& [command, used] : uses) {
        const std::set<std::string> listed = cktest::options_in_help(command);
        for (const std::string& option : every)
            BOOST_TEST(listed.contains(option) == used.contains(option), command << " " << option);
        auto help = cktest::run_ckhost({command, "--help"});
        BOOST_TEST(
            contains(help.out, "The other global options are accepted here") == (used != every),
            command);
    }
    const std::string sample = cktest::sample_model().string();
    auto plain = cktest::run_ckhost({"inspect", sample});
    auto unused = cktest::run_ckhost({"inspect", sample, "--no-sync", "--threads", "1",
                                      "--max-memory", "1M", "--isa", "scalar", "-q"});
    BOOST_TEST_REQUIRE(unused.exit_code == 0, unused.err);
    BOOST_TEST(unused.out == plain.out);
    // The completion script offers what the help lists.
    auto script = cktest::run_ckhost({"completion", "bash"});
    BOOST_TEST_REQUIRE(script.exit_code == 0, script.err);
    BOOST_TEST(contains(script.out, "--plugin-dir"), script.out);
}

// `ckhost help` starts with what a newcomer came to do, each goal a command line.
BOOST_AUTO_TEST_CASE(general_help_starts_with_the_common_goals) {
    auto r = cktest::run_ckhost({"help"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto goals = r.out.find("common goals:"), usage = r.out.find("usage: ckhost");
    BOOST_TEST_REQUIRE(goals != std::string::npos, r.out);
    BOOST_TEST(goals < usage, r.out);
    BOOST_TEST(r.out.find('\n') < goals, r.out);  // one line says what ckhost is, then the goals
    for (const std::string command :
         {"ckhost quantize model-f16.gguf", "ckhost --pipeline hf:gguf", "ckhost split",
          "ckhost merge", "ckhost inspect", "ckhost help quantize", "ckhost help STAGE"})
        BOOST_TEST(contains(r.out, command), command);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_help
