// Plugin discovery and the plugin boundary: ABI mismatches and non-plugins are listed as
// skipped and never called; exceptions thrown inside a plugin become clean errors.
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "ck/plugin.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_plugins {

using cktest::contains;

namespace {

std::string plugin_dir() {
    return cktest::test_plugin_dir().string();
}
std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

// The fingerprint text of the toolchain compiling this test (ckhost's own), written out
// independently of the host's code; `plus` raises the compiler's major version.
std::string this_toolchain(int plus = 0, bool old_string_abi = false) {
#if defined(__clang__)
    std::string s = "Clang " + std::to_string(__clang_major__ + plus);
#else
    std::string s = "GCC " + std::to_string(__GNUC__ + plus);
#endif
#if defined(_LIBCPP_VERSION)
    (void)old_string_abi;
    return s + " / libc++ ABI v" + std::to_string(_LIBCPP_ABI_VERSION);
#else
    return s + (old_string_abi || !_GLIBCXX_USE_CXX11_ABI ? " / libstdc++ old (pre-C++11) ABI"
                                                          : " / libstdc++ cxx11 ABI");
#endif
}

std::map<std::string, nlohmann::json> plugins_by_name(const std::vector<std::string>& args) {
    auto r = cktest::run_ckhost(args);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::map<std::string, nlohmann::json> by_name;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& p : doc["plugins"]) by_name[p["name"]] = p;
    return by_name;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(plugins)

BOOST_AUTO_TEST_CASE(listing_shows_skipped_plugins_with_reasons) {
    auto r = cktest::run_ckhost({"plugins", "--json", "--plugin-dir", plugin_dir()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto doc = nlohmann::json::parse(r.out);
    std::map<std::string, nlohmann::json> by_name;
    for (const auto& p : doc["plugins"]) by_name[p["name"]] = p;

    BOOST_TEST_REQUIRE(by_name.count("bad_abi") == 1u);
    BOOST_TEST(!by_name["bad_abi"]["loaded"].get<bool>());
    BOOST_TEST(contains(by_name["bad_abi"]["skipped"].get<std::string>(), "ABI version 999"));
    BOOST_TEST(contains(by_name["no_descriptor"]["skipped"].get<std::string>(),
                        "exports no ckhost_plugin_descriptor"));
    BOOST_TEST(contains(by_name["not_elf"]["skipped"].get<std::string>(), "cannot be loaded"));
    BOOST_TEST(by_name["testkit"]["loaded"].get<bool>());
    BOOST_TEST(by_name["gguf"]["loaded"].get<bool>());
    BOOST_TEST(by_name["gguf"]["kinds"] == nlohmann::json({"reader", "writer"}),
               by_name["gguf"].dump());
    BOOST_TEST(by_name["gguf"]["abi_version"].get<unsigned>() == CK_PLUGIN_ABI_VERSION);

    auto text = cktest::run_ckhost({"plugins", "--plugin-dir", plugin_dir()});
    BOOST_TEST(text.exit_code == 0);
    BOOST_TEST(contains(text.out, "bad_abi  SKIPPED: built for plugin ABI version 999"), text.out);
}

// The v2 descriptor checks, in order after the ABI version: struct_size, then the toolchain
// fingerprint. Each skipped test plugin aborts the process if anything of it is called.
BOOST_AUTO_TEST_CASE(plugins_of_another_toolchain_or_with_a_short_descriptor_are_skipped) {
    const std::string host = this_toolchain();
    const std::string other = "built with " + this_toolchain(1) + ", ckhost with " + host +
                              "; rebuild it with the same compiler and standard library";
    const std::string small =
        "its descriptor is 8 bytes, this ckhost reads " +
        std::to_string(offsetof(ck_plugin_descriptor, kernel_variant) + sizeof(void*)) +
        "; rebuild it against this SDK";

    auto by_name = plugins_by_name({"plugins", "--json", "--plugin-dir", plugin_dir()});
    BOOST_TEST(!by_name["other_compiler"]["loaded"].get<bool>());
    BOOST_TEST(by_name["other_compiler"]["skipped"].get<std::string>() == other);
    BOOST_TEST(!by_name["small_descriptor"]["loaded"].get<bool>());
    BOOST_TEST(by_name["small_descriptor"]["skipped"].get<std::string>() == small);
    BOOST_TEST(!by_name["other_compiler"].contains("flags"));  // nothing past the checks is read
#if defined(__GLIBCXX__)
    // Built with -D_GLIBCXX_USE_CXX11_ABI=0 and the ordinary CK_PLUGIN_DESCRIPTOR_HEAD.
    BOOST_TEST(!by_name["old_string_abi"]["loaded"].get<bool>());
    BOOST_TEST(by_name["old_string_abi"]["skipped"].get<std::string>() ==
               "built with " + this_toolchain(0, true) + ", ckhost with " + host +
                   "; rebuild it with the same compiler and standard library");
#endif

    auto text = cktest::run_ckhost({"plugins", "--plugin-dir", plugin_dir()});
    BOOST_TEST(text.exit_code == 0, text.err);
    BOOST_TEST(contains(text.out, "toolchain: " + host + " (plugins must be built with the same)"),
               text.out);
    BOOST_TEST(contains(text.out, "other_compiler  SKIPPED: " + other + "\n"), text.out);
    BOOST_TEST(contains(text.out, "small_descriptor  SKIPPED: " + small + "\n"), text.out);
    const auto doc = nlohmann::json::parse(cktest::run_ckhost({"plugins", "--json"}).out);
    BOOST_TEST(doc["toolchain"].get<std::string>() == host);

    // Naming them in a pipeline is exit 3 with the same reason, and nothing of them runs.
    for (const std::string name : {"other_compiler", "small_descriptor"}) {
        cktest::TempDir out;
        auto r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline",
                                     "gguf:" + name + ":gguf", "-i", sample(), "-o",
                                     (out / "o.gguf").string()});
        BOOST_TEST(r.exit_code == 3, name << ": " << r.err);
        BOOST_TEST(contains(r.err, name == "small_descriptor" ? small : other), r.err);
        BOOST_TEST(out.entries().empty());
    }
    // inspect probes every reader it finds: the skipped ones are never probed.
    auto inspect = cktest::run_ckhost({"inspect", sample(), "--plugin-dir", plugin_dir()});
    BOOST_TEST(inspect.exit_code == 0, inspect.err);
}

BOOST_AUTO_TEST_CASE(the_listing_shows_each_plugins_flags) {
    auto by_name = plugins_by_name({"plugins", "--json", "--plugin-dir", plugin_dir()});
    // Every built-in plugin is declared concurrent (audited: their reader, transform and
    // apply_group calls keep no state between tensors, or lock what they share); testkit is not.
    for (const char* name :
         {"gguf", "bump", "dequant", "quantize", "headpack", "gguflite", "repack", "safetensors",
          "meta", "passthrough", "testkit_concurrent"}) {
        BOOST_TEST_REQUIRE(by_name[name]["loaded"].get<bool>(), name);
        BOOST_TEST(by_name[name]["flags"]["concurrent"].get<bool>(), name);
        BOOST_TEST(by_name[name]["toolchain"].get<std::string>() == this_toolchain(), name);
    }
    BOOST_TEST(!by_name["testkit"]["flags"]["concurrent"].get<bool>());
    // The writers that write one file front to back can write to standard output (-o -).
    for (const char* name : {"gguf", "safetensors"})
        BOOST_TEST(by_name[name]["flags"]["streams"].get<bool>(), name);
    for (const char* name : {"bump", "gguflite", "testkit"})
        BOOST_TEST(!by_name[name]["flags"]["streams"].get<bool>(), name);

    const std::string abi = "  ABI " + std::to_string(CK_PLUGIN_ABI_VERSION);
    auto text = cktest::run_ckhost({"plugins", "--plugin-dir", plugin_dir()});
    BOOST_TEST(contains(text.out, "gguf  (reader, writer)  version 1.0.0" + abi +
                                      "  concurrent: yes  streams: yes\n"),
               text.out);
    BOOST_TEST(
        contains(text.out, "testkit  (transform)  version 0.0.1" + abi + "  concurrent: no\n"),
        text.out);
    // And the concurrent one converts like any other.
    cktest::TempDir out;
    auto r =
        cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline", "gguf:passthrough:gguf",
                            "-i", sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(sample(), out / "o.gguf"));
}

BOOST_AUTO_TEST_CASE(the_environment_variable_adds_a_search_directory) {
    ::setenv("CKHOST_PLUGIN_PATH", plugin_dir().c_str(), 1);
    auto r = cktest::run_ckhost({"plugins"});
    ::unsetenv("CKHOST_PLUGIN_PATH");
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(contains(r.out, "testkit"), r.out);
    // And without it, only the built-in directory next to the executable is searched.
    auto plain = cktest::run_ckhost({"plugins"});
    BOOST_TEST(!contains(plain.out, "testkit"));
    BOOST_TEST(contains(plain.out, "gguf"));
}

BOOST_AUTO_TEST_CASE(using_a_skipped_plugin_is_exit_3) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline", "gguf:bad_abi:gguf",
                                 "-i", sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(r.exit_code == 3, r.err);  // and not a crash: bad_abi aborts if anything is called
    BOOST_TEST(contains(r.err, "ABI version 999"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(exceptions_inside_a_plugin_become_clean_errors) {
    struct Case {
        std::string stage, expected;
    };
    for (const Case& c :
         {Case{"testkit[fail_at=2]", "plugin 'testkit' failed: testkit threw a std::runtime_error"},
          Case{"testkit[fail_at=2,fail_with=int]",
               "plugin 'testkit' failed with an unknown exception"},
          Case{"testkit[fail_at=2,fail_with=ck]", "tensor 2: testkit failed on purpose"},
          Case{"testkit[fail_in_plan=1]", "testkit refuses to plan"}}) {
        cktest::TempDir out;
        auto r = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--pipeline",
                                     "gguf:" + c.stage + ":gguf", "-i", sample(), "-o",
                                     (out / "o.gguf").string()});
        BOOST_TEST(r.exit_code == 1, c.stage << ": " << r.err);
        BOOST_TEST(contains(r.err, c.expected), c.stage << ": " << r.err);
        BOOST_TEST(out.entries().empty(), c.stage << " left output behind");
    }
}

// Two libraries named testkit.so: the first in search order wins, the other is listed as
// shadowed with the winner's path, and a warning names both files. The shadowed one is a copy of
// bad_abi.so, which aborts the process if anything of it is called: it must never be loaded.
BOOST_AUTO_TEST_CASE(the_first_of_two_plugins_with_one_name_wins) {
    cktest::TempDir other;
    const std::string real = (cktest::test_plugin_dir() / "testkit.so").string();
    const std::string impostor = (other / "testkit.so").string();
    std::filesystem::copy_file(cktest::test_plugin_dir() / "bad_abi.so", impostor);

    auto r = cktest::run_ckhost(
        {"plugins", "--json", "--plugin-dir", plugin_dir(), "--plugin-dir", other.path().string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto doc = nlohmann::json::parse(r.out);
    std::vector<nlohmann::json> testkits;
    for (const auto& p : doc["plugins"])
        if (p["name"] == "testkit") testkits.push_back(p);
    BOOST_TEST_REQUIRE(testkits.size() == 2u);
    BOOST_TEST(testkits[0]["path"].get<std::string>() == real);
    BOOST_TEST(testkits[0]["loaded"].get<bool>());
    BOOST_TEST(testkits[1]["path"].get<std::string>() == impostor);
    BOOST_TEST(!testkits[1]["loaded"].get<bool>());
    BOOST_TEST(testkits[1]["shadowed"].get<bool>());
    BOOST_TEST(contains(testkits[1]["skipped"].get<std::string>(),
                        "comes first in the search path: " + real));
    const std::string warnings = doc["warnings"].dump();
    BOOST_TEST(contains(warnings, real), warnings);
    BOOST_TEST(contains(warnings, impostor), warnings);

    // The winner does the work; the text listing and the conversion both warn.
    cktest::TempDir out;
    auto run = cktest::run_ckhost({"--plugin-dir", plugin_dir(), "--plugin-dir",
                                   other.path().string(), "--pipeline", "gguf:testkit:gguf", "-i",
                                   sample(), "-o", (out / "o.gguf").string()});
    BOOST_TEST(run.exit_code == 0, run.err);
    BOOST_TEST(contains(run.err, "plugin 'testkit' found twice"), run.err);
    auto text = cktest::run_ckhost(
        {"plugins", "--plugin-dir", plugin_dir(), "--plugin-dir", other.path().string()});
    BOOST_TEST(contains(text.out, "testkit  SKIPPED: another plugin named 'testkit'"), text.out);

    // In the other order the impostor wins, is refused for its ABI, and nothing is called.
    auto reversed = cktest::run_ckhost({"--plugin-dir", other.path().string(), "--plugin-dir",
                                        plugin_dir(), "--pipeline", "gguf:testkit:gguf", "-i",
                                        sample(), "-o", (out / "p.gguf").string()});
    BOOST_TEST(reversed.exit_code == 3, reversed.err);
    BOOST_TEST(contains(reversed.err, "ABI version 999"), reversed.err);
    BOOST_TEST(!std::filesystem::exists(out / "p.gguf"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_plugins
