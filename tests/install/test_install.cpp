// The installed SDK, as a third party uses it: install ckhost into a temporary prefix, build
// examples/third_party_plugin against that prefix alone, and run the installed ckhost with the
// new plugin. The npy files are checked against the scalar dequantization reference, and NumPy
// (when present) must read them as index.json describes.
#include <boost/test/unit_test.hpp>

#include <boost/algorithm/string.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/plugin.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_install {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    BOOST_TEST_REQUIRE(v, name << " is not set (run the tests through ctest)");
    return v;
}

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

std::string text_of(const fs::path& p) {
    auto bytes = cktest::read_file(p);
    return {bytes.begin(), bytes.end()};
}

// Runs a tool found on PATH; on failure the test shows everything it printed.
void require_success(const std::vector<std::string>& command) {
    const auto r = cktest::run_program(command.front(), {command.begin() + 1, command.end()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, command.front() << " failed:\n" << r.out << r.err);
}

// One prefix and one out-of-tree plugin build for the whole suite (installing and building
// take a few seconds).
struct Installed {
    cktest::TempDir dir;
    fs::path prefix = dir / "prefix";
    fs::path plugin_build = dir / "npy-build";

    Installed() {
        ::unsetenv("CKHOST_PLUGIN_PATH");  // the installed ckhost must find its plugins alone
        require_success(
            {"cmake", "--install", env("CKHOST_BUILD_DIR"), "--prefix", prefix.string()});
        // Nothing of this source tree is visible to the plugin build: only the prefix.
        require_success({"cmake", "-S", (cktest::examples_dir() / "third_party_plugin").string(),
                         "-B", plugin_build.string(), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                         "-DCMAKE_PREFIX_PATH=" + prefix.string(),
                         "-DCMAKE_CXX_COMPILER=" + env("CKHOST_CXX"),
                         "-DCMAKE_CXX_FLAGS=" + env("CKHOST_EXAMPLE_CXX_FLAGS")});
        require_success({"cmake", "--build", plugin_build.string()});
    }

    // The installed ckhost (the constructor unset CKHOST_PLUGIN_PATH).
    cktest::RunResult ckhost(const std::vector<std::string>& args) const {
        return cktest::run_program(prefix / "bin" / "ckhost", args);
    }
};

Installed& installed() {
    static Installed once;
    return once;
}

struct NpyFile {
    std::string descr;
    std::vector<std::uint64_t> shape;
    std::size_t data_offset = 0;
    std::vector<unsigned char> bytes;
};

// Reads a .npy file without NumPy: magic, version 1.0, the header dict, 64-byte alignment.
NpyFile read_npy(const fs::path& p) {
    NpyFile f;
    f.bytes = cktest::read_file(p);
    BOOST_TEST_REQUIRE(f.bytes.size() >= 10u);
    BOOST_TEST_REQUIRE(std::memcmp(f.bytes.data(), "\x93NUMPY\x01\x00", 8) == 0, p);
    const std::size_t header_len = f.bytes[8] | (std::size_t(f.bytes[9]) << 8);
    f.data_offset = 10 + header_len;
    BOOST_TEST(f.data_offset % 64 == 0u, p);
    BOOST_TEST_REQUIRE(f.bytes.size() >= f.data_offset);
    const std::string dict(f.bytes.begin() + 10, f.bytes.begin() + f.data_offset);
    BOOST_TEST(dict.back() == '\n');
    BOOST_TEST(contains(dict, "'fortran_order': False"), dict);
    const auto d = dict.find("'descr': '") + 10;
    f.descr = dict.substr(d, dict.find('\'', d) - d);
    auto s = dict.find("'shape': (") + 10;
    const auto end = dict.find(')', s);
    while (s < end) {
        std::size_t used = 0;
        f.shape.push_back(std::stoull(dict.substr(s, end - s), &used));
        s = dict.find_first_not_of(", ", s + used);
    }
    return f;
}

// Every tensor of the sample, as the npy directory `dir` must hold it.
void check_against_reference(const fs::path& dir, bool f16) {
    const json index = json::parse(text_of(dir / "index.json"));
    BOOST_TEST(index["format"] == "ckhost-npy");
    BOOST_TEST(index["metadata"]["general.architecture"] == "llama");
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader header = reader.open(sample());
    BOOST_TEST_REQUIRE(index["tensors"].size() == header.tensors.size());

    for (std::size_t i = 0; i < header.tensors.size(); ++i) {
        const ck::TensorInfo& t = header.tensors[i];
        const json& entry = index["tensors"][i];
        BOOST_TEST(entry["name"].get<std::string>() == t.name);
        BOOST_TEST(entry["source_type"].get<std::string>() == std::string(ck::type_name(t.type)));
        std::vector<std::uint64_t> shape(t.ne.rbegin(), t.ne.rend());
        BOOST_TEST(entry["shape"].get<std::vector<std::uint64_t>>() == shape, t.name);

        const NpyFile npy = read_npy(dir / entry["file"].get<std::string>());
        BOOST_TEST(npy.shape == shape, t.name);
        BOOST_TEST(npy.descr == (f16 ? "<f2" : "<f4"), t.name);
        std::vector<float> values(t.elements());
        ck::kernels::scalar_dequant_table().fn[t.type](reader.tensor(i).bytes().data(),
                                                       values.data(), values.size());
        std::vector<unsigned char> expected(values.size() * (f16 ? 2 : 4));
        if (f16)
            for (std::size_t j = 0; j < values.size(); ++j) {
                const std::uint16_t h = ck::kernels::f32_to_f16(values[j]);
                ck::le::store(expected.data() + 2 * j, h);
            }
        else
            ck::le::store_array(expected.data(), values.data(), values.size());
        BOOST_TEST(std::equal(npy.bytes.begin() + npy.data_offset, npy.bytes.end(),
                              expected.begin(), expected.end()),
                   t.name << " differs from the reference");
    }
}

std::string python_with_numpy() {
    for (const char* python : {"python3", "/usr/bin/python3"}) try {
            if (cktest::run_program(python, {"-c", "import numpy"}).exit_code == 0) return python;
        } catch (const std::exception&) {
            // not installed: try the next
        }
    return {};
}

struct NumpyPresent {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result ok(!python_with_numpy().empty());
        ok.message() << "no python3 with numpy (scripts/install-deps.sh installs python3-numpy): "
                        "skipping the NumPy loading test";
        return ok;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(install)

BOOST_AUTO_TEST_CASE(the_installed_ckhost_finds_its_plugins_with_no_variable_set) {
    auto r = installed().ckhost({"plugins", "--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const json doc = json::parse(r.out);
    std::set<std::string> loaded;
    for (const auto& p : doc["plugins"]) {
        BOOST_TEST(contains(p["path"].get<std::string>(), installed().prefix.string()), p.dump());
        if (p["loaded"].get<bool>()) loaded.insert(p["name"].get<std::string>());
    }
    for (const char* name : {"gguf", "bump", "headpack", "dequant", "gguflite", "repack",
                             "safetensors", "quantize", "meta"})
        BOOST_TEST(loaded.count(name) == 1u, name);
    // And the main job runs from the install tree.
    auto job = installed().ckhost({"--pipeline", "gguf:headpack:bump", "-i", sample(), "-o",
                                   (installed().dir / "bump-out").string() + "/"});
    BOOST_TEST(job.exit_code == 0, job.err);
    BOOST_TEST(fs::exists(installed().dir / "bump-out" / "weights.bump"));
}

// The manual page and the shell completion (issue 16) are installed where man, bash-completion
// and zsh look; the completion names every built-in stage and its options.
BOOST_AUTO_TEST_CASE(the_manual_page_and_the_completion_scripts_are_installed) {
    const fs::path prefix = installed().prefix;
    BOOST_TEST(fs::exists(prefix / "share/man/man1/ckhost.1"));
    const fs::path bash = prefix / "share/bash-completion/completions/ckhost";
    const fs::path zsh = prefix / "share/zsh/site-functions/_ckhost";
    BOOST_TEST_REQUIRE(fs::exists(bash));
    BOOST_TEST_REQUIRE(fs::exists(zsh));
    const auto text = cktest::read_file(bash);
    const std::string script(text.begin(), text.end());
    for (const char* word : {"complete -F _ckhost ckhost", "headpack", "repack) _ckhost_print to=",
                             "int8", "nf4", "--dry-run", "--plugin-dir"})
        BOOST_TEST(contains(script, word), word);
    const auto z = cktest::read_file(zsh);
    const std::string zscript(z.begin(), z.end());
    BOOST_TEST(zscript.starts_with("#compdef ckhost\n"));
    // Every built-in plugin, from the build's one list of them, is a stage in both scripts.
    const char* builtin = std::getenv("CKHOST_BUILTIN_PLUGINS");
    BOOST_TEST_REQUIRE(builtin != nullptr, "CKHOST_BUILTIN_PLUGINS is not set (run through ctest)");
    std::vector<std::string> names;
    boost::split(names, std::string(builtin), boost::is_any_of(","));
    BOOST_TEST(names.size() >= 10u);
    for (const std::string& name : names) {
        const std::regex word("\\b" + name + "\\b");
        BOOST_TEST(std::regex_search(script, word), "bash completion lacks stage " << name);
        BOOST_TEST(std::regex_search(zscript, word), "zsh completion lacks stage " << name);
    }
    auto syntax = cktest::run_program("bash", {"-n", bash.string()});
    BOOST_TEST(syntax.exit_code == 0, syntax.err);
}

BOOST_AUTO_TEST_CASE(the_package_config_installs_headers_and_targets) {
    const fs::path prefix = installed().prefix;
    for (const char* file :
         {"include/ck/stage.hpp", "include/ck/plugin.hpp", "include/ck/kernels/dequant.hpp",
          "lib/cmake/ckhost/ckhostConfig.cmake", "lib/cmake/ckhost/ckhostConfigVersion.cmake",
          "lib/cmake/ckhost/ckhostTargets.cmake", "lib/cmake/ckhost/ckhostPlugin.cmake"})
        BOOST_TEST(fs::exists(prefix / file), file);
    BOOST_TEST(fs::exists(installed().plugin_build / "npy.so"));
    // libcksdk's SONAME is the plugin ABI version.
    const std::string soname = "libcksdk.so." + std::to_string(CK_PLUGIN_ABI_VERSION);
    bool found = false;
    for (const auto& e : fs::recursive_directory_iterator(prefix))
        found = found || e.path().filename() == soname;
    BOOST_TEST(found, soname << " is not installed");
}

BOOST_AUTO_TEST_CASE(the_out_of_tree_npy_plugin_converts_micro_llama) {
    auto listing =
        installed().ckhost({"plugins", "--plugin-dir", installed().plugin_build.string()});
    BOOST_TEST(contains(listing.out, "npy  (writer)  version 1.0.0  ABI " +
                                         std::to_string(CK_PLUGIN_ABI_VERSION) + "  kernels: "),
               listing.out);
    BOOST_TEST(contains(listing.out, "  concurrent: no\n    NumPy: one .npy per tensor"),
               listing.out);

    const fs::path f32 = installed().dir / "npy-f32", f16 = installed().dir / "npy-f16";
    auto r = installed().ckhost({"--plugin-dir", installed().plugin_build.string(), "--pipeline",
                                 "gguf:npy", "-i", sample(), "-o", f32.string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_against_reference(f32, false);

    r = installed().ckhost({"--plugin-dir", installed().plugin_build.string(), "--pipeline",
                            "gguf:npy[dtype=f16]", "-i", sample(), "-o", f16.string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    check_against_reference(f16, true);

    // Options are checked by the host from the plugin's descriptor.
    auto bad = installed().ckhost({"--plugin-dir", installed().plugin_build.string(), "--pipeline",
                                   "gguf:npy[dtype=f64]", "-i", sample(), "-o",
                                   (installed().dir / "never").string() + "/"});
    BOOST_TEST(bad.exit_code == 2, bad.err);
    BOOST_TEST(contains(bad.err, "f32|f16"), bad.err);
    BOOST_TEST(!fs::exists(installed().dir / "never"));
}

BOOST_AUTO_TEST_CASE(numpy_loads_what_the_npy_plugin_wrote,
                     *boost::unit_test::precondition(NumpyPresent())) {
    const fs::path out = installed().dir / "npy-numpy";
    auto r = installed().ckhost({"--plugin-dir", installed().plugin_build.string(), "--pipeline",
                                 "gguf:npy", "-i", sample(), "-o", out.string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const fs::path script = cktest::examples_dir() / "third_party_plugin" / "load_npy.py";
    auto check =
        cktest::run_program(python_with_numpy(), {script.string(), "--check", out.string()});
    BOOST_TEST(check.exit_code == 0, check.out << check.err);
    BOOST_TEST(contains(check.out, "ok: 21 tensors"), check.out << check.err);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_install
