// The command line of issue 16: help per command, global options on either side, several files
// for inspect and verify, repeated --kv, did-you-mean for flags, a bad CKHOST_ISA or
// --plugin-dir, strict boolean stage options, shell-quoted hints, the completion scripts and the
// manual page.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "ck/support/shell_quote.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_command_line {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

fs::path repository() {
    return cktest::examples_dir().parent_path();
}

// A file no reader recognises.
fs::path garbage(const cktest::TempDir& dir) {
    std::ofstream(dir / "garbage.bin") << "not a model at all\n";
    return dir / "garbage.bin";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(command_line)

// `ckhost help CMD` and `ckhost CMD --help` print that command's usage and options.
BOOST_AUTO_TEST_CASE(help_per_command) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
        {"convert", {"--pipeline", "--dry-run", "--update", "--force"}},
        {"inspect", {"--tensors", "--kv"}},
        {"verify", {"--data"}},
        {"compare", {"--report", "--imatrix", "--top", "--force", "--update"}},
        {"plugins", {"--plugin-dir"}},
        {"batch", {"--jobs", "--force"}},
        {"completion", {"bash"}},
    };
    for (const auto& [command, options] : commands) {
        auto help = cktest::run_ckhost({"help", command});
        BOOST_TEST(help.exit_code == 0, command << ": " << help.err);
        BOOST_TEST(help.out.starts_with("usage: ckhost " + command), help.out);
        for (const std::string& option : options)
            BOOST_TEST(contains(help.out, option), command << " lacks " << option);
        // Every command's help lists the global options it uses too (completion's script is
        // text only, so --json is not among them: test_help.cpp checks each command's list).
        BOOST_TEST(contains(help.out, command == "completion" ? "--plugin-dir" : "--json"),
                   help.out);
        BOOST_TEST(!contains(help.out, "usage: ckhost --pipeline"), command << ": general help");
        // The positional arguments are in the usage line, not among the options.
        for (const std::string hidden : {"--file", "--jobs-file", "--shell"})
            BOOST_TEST(!contains(help.out, hidden), command << " lists " << hidden);
        auto flag = cktest::run_ckhost({command, "--help"});
        BOOST_TEST(flag.exit_code == 0);
        BOOST_TEST(flag.out == help.out, command);
        auto global = cktest::run_ckhost({"-q", "help", command});
        BOOST_TEST(global.out == help.out, command);
    }
    auto unknown = cktest::run_ckhost({"help", "inspekt"});
    BOOST_TEST(unknown.exit_code == 2);
    BOOST_TEST(contains(unknown.err, "help inspekt: unknown command; did you mean 'inspect'?"),
               unknown.err);
    auto general = cktest::run_ckhost({"help"});
    BOOST_TEST(general.exit_code == 0);
    BOOST_TEST(contains(general.out, "ckhost help [COMMAND]"), general.out);
}

// The global options go before or after the command, with the same result.
BOOST_AUTO_TEST_CASE(global_options_before_or_after_the_command) {
    auto before = cktest::run_ckhost({"--json", "-q", "inspect", sample()});
    auto after = cktest::run_ckhost({"inspect", sample(), "-q", "--json"});
    BOOST_TEST_REQUIRE(before.exit_code == 0, before.err);
    BOOST_TEST(before.out == after.out);
    BOOST_TEST(json::parse(before.out)["format"] == "gguf");
    auto threads = cktest::run_ckhost({"--threads", "1", "--isa", "scalar", "plugins", "--json"});
    BOOST_TEST_REQUIRE(threads.exit_code == 0, threads.err);
    BOOST_TEST(json::parse(threads.out)["threads"] == 1);
}

// inspect and verify take several files; one that fails does not stop the others, and the
// exit status is the failure's.
BOOST_AUTO_TEST_CASE(several_files_for_inspect_and_verify) {
    cktest::TempDir dir;
    fs::copy_file(cktest::sample_model(), dir / "copy.gguf");
    const std::string copy = (dir / "copy.gguf").string();
    auto text = cktest::run_ckhost({"inspect", sample(), copy});
    BOOST_TEST_REQUIRE(text.exit_code == 0, text.err);
    BOOST_TEST(contains(text.out, sample() + ": gguf\n"), text.out);
    BOOST_TEST(contains(text.out, "\n" + copy + ": gguf\n"), text.out);

    auto j = cktest::run_ckhost({"inspect", sample(), copy, "--json"});
    BOOST_TEST_REQUIRE(j.exit_code == 0, j.err);
    const json doc = json::parse(j.out);
    BOOST_TEST(doc["ok"] == true);
    BOOST_TEST_REQUIRE(doc["files"].size() == 2u);
    BOOST_TEST(doc["files"][1]["file"] == copy);
    BOOST_TEST(doc["files"][0]["facts"] == doc["files"][1]["facts"]);

    const std::string bad = garbage(dir).string();
    auto v = cktest::run_ckhost({"verify", sample(), bad, copy});
    BOOST_TEST(v.exit_code == 1, v.err);
    // One line per sound file, in the order given; the unsound one's error on stderr.
    BOOST_TEST(v.out == sample() + ": OK (gguf, 21 tensors)\n" + copy + ": OK (gguf, 21 tensors)\n",
               v.out);
    BOOST_TEST(contains(v.err, "ckhost: error: " + bad + ":"), v.err);

    auto vj = cktest::run_ckhost({"verify", sample(), bad, "--json"});
    BOOST_TEST(vj.exit_code == 1, vj.err);
    const json vdoc = json::parse(vj.out);
    BOOST_TEST(vdoc["ok"] == false);
    BOOST_TEST(vdoc["files"][0]["ok"] == true);
    BOOST_TEST(vdoc["files"][1]["ok"] == false);
    BOOST_TEST(vdoc["files"][1]["error"]["file"] == bad, vj.out);
    BOOST_TEST(vdoc["files"][1]["error"]["exit_code"] == 1);
}

// --kv is repeatable: each value in full, under its key when there are several.
BOOST_AUTO_TEST_CASE(kv_is_repeatable) {
    auto one = cktest::run_ckhost({"inspect", sample(), "--kv", "general.architecture"});
    BOOST_TEST_REQUIRE(one.exit_code == 0, one.err);
    BOOST_TEST(one.out == "llama\n", one.out);  // a string as it is, for scripts
    auto two = cktest::run_ckhost(
        {"inspect", sample(), "--kv", "general.architecture", "--kv", "llama.block_count"});
    BOOST_TEST_REQUIRE(two.exit_code == 0, two.err);
    BOOST_TEST(two.out == "general.architecture (str):\nllama\nllama.block_count (u32):\n2\n",
               two.out);
    auto j = cktest::run_ckhost({"inspect", sample(), "--json", "--kv", "general.architecture",
                                 "--kv", "llama.block_count"});
    BOOST_TEST_REQUIRE(j.exit_code == 0, j.err);
    const json doc = json::parse(j.out);
    BOOST_TEST(doc["values"].size() == 2u);
    BOOST_TEST(doc["values"][1]["key"] == "llama.block_count");
    BOOST_TEST(doc["values"][1]["value"] == 2);
    // One unknown key fails the whole request, before anything is printed.
    auto typo = cktest::run_ckhost(
        {"inspect", sample(), "--kv", "general.architecture", "--kv", "llama.block_cont"});
    BOOST_TEST(typo.exit_code == 1);
    BOOST_TEST(typo.out.empty(), typo.out);
    BOOST_TEST(contains(typo.err, "did you mean 'llama.block_count'"), typo.err);
}

// A mistyped flag gets the closest option of its command.
BOOST_AUTO_TEST_CASE(did_you_mean_for_flags) {
    struct Case {
        std::vector<std::string> args;
        std::string expected;
    };
    for (const Case& c : {
             Case{{"--josn", "inspect", sample()},
                  "unrecognised option '--josn'; did you mean '--json'?"},
             Case{{"inspect", sample(), "--tensros"}, "did you mean '--tensors'?"},
             Case{{"verify", sample(), "--dta"}, "did you mean '--data'?"},
             Case{{"--pipeline", "gguf:gguf", "--dryrun", "-i", sample(), "-o", "x"},
                  "did you mean '--dry-run'?"},
             Case{{"batch", "jobs.txt", "--forse"}, "did you mean '--force'?"},
             Case{{"plugins", "--plugin-dirs", "x"}, "did you mean '--plugin-dir'?"},
         }) {
        auto r = cktest::run_ckhost(c.args);
        BOOST_TEST(r.exit_code == 2, c.expected << ": " << r.err);
        BOOST_TEST(contains(r.err, c.expected), c.expected << ": " << r.err);
    }
}

// CKHOST_ISA and --plugin-dir are checked: a typo is an error, not a silent default.
BOOST_AUTO_TEST_CASE(bad_isa_and_missing_plugin_dir_are_errors) {
    {
        cktest::ScopedEnv isa("CKHOST_ISA", "foo");
        auto r = cktest::run_ckhost({"plugins"});
        BOOST_TEST(r.exit_code == 2);
        BOOST_TEST(contains(r.err, "CKHOST_ISA=foo: expected " + cktest::isa_choices), r.err);
        auto inspect = cktest::run_ckhost({"inspect", sample()});
        BOOST_TEST(inspect.exit_code == 2);
        // Another architecture's ISA is refused, naming it: it could never run here.
#if defined(__aarch64__)
        const std::string foreign = "avx2";
#else
        const std::string foreign = "neon";
#endif
        auto other = cktest::run_ckhost({"--isa", foreign, "plugins"});
        BOOST_TEST(other.exit_code == 2);
        BOOST_TEST(
            contains(other.err, "--isa " + foreign + ": this build's CPU architecture has no " +
                                    foreign + " kernels"),
            other.err);
        // --isa given explicitly decides, whatever the variable says.
        auto forced = cktest::run_ckhost({"--isa", "scalar", "plugins"});
        BOOST_TEST(forced.exit_code == 0, forced.err);
    }
    {
        cktest::ScopedEnv isa("CKHOST_ISA", "scalar");
        auto r = cktest::run_ckhost({"plugins", "--json"});
        BOOST_TEST(r.exit_code == 0, r.err);
    }
    cktest::TempDir dir;
    auto missing = cktest::run_ckhost({"--plugin-dir", (dir / "nope").string(), "plugins"});
    BOOST_TEST(missing.exit_code == 2);
    BOOST_TEST(
        contains(missing.err, "--plugin-dir " + (dir / "nope").string() + ": no such directory"),
        missing.err);
    const fs::path file = garbage(dir);
    auto not_dir = cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample(), "-o",
                                       (dir / "x.gguf").string(), "--plugin-dir", file.string()});
    BOOST_TEST(not_dir.exit_code == 2);
    BOOST_TEST(contains(not_dir.err, ": not a directory"), not_dir.err);
    BOOST_TEST(!fs::exists(dir / "x.gguf"));
}

// Boolean stage options take 1/0/true/false/yes/no and nothing else.
BOOST_AUTO_TEST_CASE(boolean_options_accept_exactly_six_words) {
    cktest::TempDir dir;
    int n = 0;
    for (const std::string no : {"0", "false", "no"}) {
        const fs::path out = dir / ("ok" + std::to_string(n++));
        auto r = cktest::run_ckhost({"-q", "--pipeline", "gguf:headpack:bump[strict=" + no + "]",
                                     "-i", sample(), "-o", out.string() + "/"});
        BOOST_TEST(r.exit_code == 0, no << ": " << r.err);
        BOOST_TEST(fs::exists(out / "weights.bump"), no);
    }
    // strict=1 refuses the sample's untied output.weight: the value was read as true.
    for (const std::string yes : {"1", "true", "yes"}) {
        const fs::path out = dir / ("strict" + std::to_string(n++));
        auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump[strict=" + yes + "]", "-i",
                                     sample(), "-o", out.string() + "/"});
        BOOST_TEST(r.exit_code == 1, yes << ": " << r.err);
        BOOST_TEST(contains(r.err, "refused because of strict=1"), r.err);
        BOOST_TEST(!fs::exists(out / "weights.bump"));
    }
    for (const std::string bad : {"2", "on", "TRUE", "y", "-1"}) {
        const fs::path out = dir / ("bad" + std::to_string(n++));
        auto r = cktest::run_ckhost({"--pipeline", "gguf:headpack:bump[strict=" + bad + "]", "-i",
                                     sample(), "-o", out.string() + "/"});
        BOOST_TEST(r.exit_code == 2, bad << ": " << r.err);
        BOOST_TEST(
            contains(r.err, "option strict=" + bad + ": expected 1, 0, true, false, yes or no"),
            r.err);
        BOOST_TEST(!fs::exists(out));
    }
}

// shell_quote leaves plain words alone and quotes everything else so that sh reads it back.
BOOST_AUTO_TEST_CASE(shell_quote_round_trips_through_sh) {
    using ck::support::shell_quote;
    BOOST_TEST(shell_quote("gguf:headpack:bump") == "gguf:headpack:bump");
    BOOST_TEST(shell_quote("out/model-1.gguf") == "out/model-1.gguf");
    BOOST_TEST(shell_quote("gguf:repack[to=int8]:bump") == "'gguf:repack[to=int8]:bump'");
    BOOST_TEST(shell_quote("") == "''");
    BOOST_TEST(shell_quote("=cmd") == "'=cmd'");
    BOOST_TEST(shell_quote("it's") == "'it'\\''s'");
    for (const std::string word : {"a b", "it's", "$HOME", "*", "{a,b}", "x;y", "~", "!x", "\"q\"",
                                   "gguf:repack[to=nf4,only=blk.*]:safetensors", "tab\there"}) {
        auto r = cktest::run_program("sh", {"-c", "printf %s " + shell_quote(word)});
        BOOST_TEST(r.out == word, word << " -> " << shell_quote(word));
    }
}

// A hint that suggests a pipeline quotes it: zsh would reject unquoted brackets as a glob.
BOOST_AUTO_TEST_CASE(hints_are_shell_quoted) {
    cktest::TempDir dir;
    // F16 weights cannot go into bump: the suggestion, README.md's quantize pipeline, is quoted.
    const fs::path f16 = dir / "f16.gguf";
    auto make = cktest::run_ckhost(
        {"-q", "--pipeline", "gguf:dequant[to=f16]:gguf", "-i", sample(), "-o", f16.string()});
    BOOST_TEST_REQUIRE(make.exit_code == 0, make.err);
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:bump", "-i", f16.string(), "-o", (dir / "out/").string()});
    BOOST_TEST(r.exit_code != 0);
    BOOST_TEST(contains(r.err, "ckhost: suggestion: --pipeline 'gguf:quantize[mix=q4_k_m]:bump'"),
               r.err);
    auto help = cktest::run_ckhost({"--help"});
    BOOST_TEST(contains(help.out, "'gguf:repack[to=nf4,only=blk.*]:safetensors'"), help.out);
}

// `ckhost completion bash` is valid bash that completes commands, options, stages by position,
// stage options and their choices, from the plugins found.
BOOST_AUTO_TEST_CASE(bash_completion_completes_stages_and_options) {
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"completion", "bash"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::ofstream(dir / "ckhost.bash") << r.out;
    auto syntax = cktest::run_program("bash", {"-n", (dir / "ckhost.bash").string()});
    BOOST_TEST_REQUIRE(syntax.exit_code == 0, syntax.err);
    // COMP_WORDS as bash splits the line (at blanks, and at ':' and '=' of COMP_WORDBREAKS).
    const std::string driver = R"(
source "$1"
complete_line() {
    COMP_LINE=$1; COMP_POINT=${#1}; COMP_WORDS=(); local rest=$1 w
    read -r -a parts <<< "$1"
    for w in "${parts[@]}"; do
        while [[ $w =~ ^([^:=]*)([:=])(.*)$ ]]; do
            [[ -n ${BASH_REMATCH[1]} ]] && COMP_WORDS+=("${BASH_REMATCH[1]}")
            COMP_WORDS+=("${BASH_REMATCH[2]}"); w=${BASH_REMATCH[3]}
        done
        [[ -n $w ]] && COMP_WORDS+=("$w")
    done
    [[ $1 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=(); _ckhost
    echo "${COMPREPLY[*]}"
}
complete_line "ckhost "
complete_line "ckhost inspect --t"
complete_line "ckhost --pipeline gg"
complete_line "ckhost --pipeline gguf:hea"
complete_line "ckhost convert -p gguf:repack[t"
complete_line "ckhost --pipeline gguf:repack[to="
complete_line "ckhost --isa av"
complete_line "ckhost completion "
)";
    std::ofstream(dir / "driver.sh") << driver;
    auto out =
        cktest::run_program("bash", {(dir / "driver.sh").string(), (dir / "ckhost.bash").string()});
    BOOST_TEST_REQUIRE(out.exit_code == 0, out.err);
    std::vector<std::string> lines;
    std::istringstream in(out.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    BOOST_TEST_REQUIRE(lines.size() == 8u, out.out);
    BOOST_TEST(lines[0] ==
               "convert quantize split merge convert-lora export-lora inspect verify compare "
               "plugins batch batch-report completion help");
    // inspect takes --threads but it changes nothing there: its completions leave it out.
    BOOST_TEST(lines[1] == "--tensors");
    BOOST_TEST(lines[2] == "gguf gguflite");  // readers only, first
    BOOST_TEST(lines[3] == "headpack");       // bash's word after the ':'
    BOOST_TEST(lines[4] == "repack[to=");
    BOOST_TEST(lines[5] == "=int8 =nf4");
    BOOST_TEST(lines[6] == "avx2 avx512");
    BOOST_TEST(lines[7] == "bash zsh");

    auto zsh = cktest::run_ckhost({"completion", "zsh"});
    BOOST_TEST(zsh.exit_code == 0);
    BOOST_TEST(zsh.out.starts_with("#compdef ckhost\n"));
    BOOST_TEST(contains(zsh.out, "repack) _ckhost_print to= only= skip="), zsh.out);
    auto fish = cktest::run_ckhost({"completion", "fish"});
    BOOST_TEST(fish.exit_code == 2);
    BOOST_TEST(contains(fish.err, "completion fish: expected bash or zsh"), fish.err);
}

// The zsh script completes the same, run by zsh itself with compadd stubbed to print what it is
// given (zsh passes the whole word: no COMP_WORDBREAKS). Skipped without zsh.
BOOST_AUTO_TEST_CASE(zsh_completion_completes_stages_and_options) {
    if (cktest::run_program("zsh", {"-c", "true"}).exit_code != 0) {
        BOOST_TEST_MESSAGE("zsh is not installed: skipping the zsh completion test");
        return;
    }
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"completion", "zsh"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::ofstream(dir / "_ckhost") << r.out;
    std::ofstream(dir / "driver.zsh") << R"(
compadd() {
    while [[ $1 == -* && $1 != -- ]]; do [[ $1 == -S ]] && shift; shift; done
    [[ $1 == -- ]] && shift; print -r -- "$*"
}
_files() { print files; }
try() { words=("${(@s: :)1}"); CURRENT=${#words}; PREFIX=$words[CURRENT]; source "$2"; }
try "ckhost insp" "$1"
try "ckhost --pipeline gg" "$1"
try "ckhost --pipeline gguf:hea" "$1"
try "ckhost --pipeline gguf:repack[to=" "$1"
try "ckhost verify --da" "$1"
try "ckhost inspect model" "$1"
)";
    auto out = cktest::run_program(
        "zsh", {"-f", (dir / "driver.zsh").string(), (dir / "_ckhost").string()});
    BOOST_TEST_REQUIRE(out.exit_code == 0, out.err);
    BOOST_TEST(out.out ==
                   "inspect\ngguf gguflite\ngguf:headpack\ngguf:repack[to=int8 "
                   "gguf:repack[to=nf4\n--data\nfiles\n",
               out.out);
}

// docs/ckhost.1 is a well-formed manual page naming every command and every option the
// commands' help lists: it cannot drift from the command line unnoticed.
BOOST_AUTO_TEST_CASE(manual_page_names_every_command_and_option) {
    const fs::path page = repository() / "docs" / "ckhost.1";
    const auto bytes = cktest::read_file(page);
    const std::string text(bytes.begin(), bytes.end());
    // roff escapes '-' as '\-'.
    const std::string plain = std::regex_replace(text, std::regex(R"(\\-)"), "-");
    for (const std::string command :
         {"convert", "quantize", "split", "merge", "convert-lora", "export-lora", "inspect",
          "verify", "compare", "plugins", "batch", "batch-report", "completion", "help"}) {
        BOOST_TEST(contains(plain, ".B " + command), command);
        if (command == "help") continue;
        for (const std::string& option : cktest::options_in_help(command))
            BOOST_TEST(contains(plain, option), command << ": " << option << " is not in ckhost.1");
    }
    auto groff = cktest::run_program("groff", {"-man", "-Tutf8", "-ww", "-z", page.string()});
    if (groff.exit_code != 127) {
        BOOST_TEST(groff.exit_code == 0, groff.err);
        BOOST_TEST(groff.err.empty(), groff.err);
    }
}

BOOST_AUTO_TEST_SUITE_END()

// Messages a new user met in Boost's words or wrongly (issue 28, item 11): a pipeline given
// without --pipeline, an argument to a command that takes none, and `help help`.
BOOST_AUTO_TEST_CASE(argument_mistakes_are_said_in_our_words) {
    cktest::TempDir dir;
    auto r = cktest::run_ckhost({"convert", "gguf:gguf", sample(), (dir / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(
        contains(r.err, "unexpected argument 'gguf:gguf': a pipeline is given with --pipeline"),
        r.err);
    BOOST_TEST(!contains(r.err, "positional"), r.err);
    BOOST_TEST(dir.entries().empty());
    r = cktest::run_ckhost({"plugins", "quantize"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "this command takes no arguments, got 'quantize'"), r.err);
    r = cktest::run_ckhost({"completion", "bash", "zsh"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "'zsh' is one too many (this command takes 1)"), r.err);
    r = cktest::run_ckhost({"help", "help"});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out, "usage: ckhost --pipeline"), r.out);
    BOOST_TEST(!contains(r.err, "did you mean"), r.err);
}
}  // namespace unity_test_command_line
