// What the compare suites share: running `ckhost compare --json`, the NumPy reference
// (compare_reference.py) over the same dequantized values, and small files written here.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ck/support/little_endian.hpp"
#include "test_support.hpp"

namespace cktest::compare {

namespace fs = std::filesystem;
using nlohmann::json;

// Debian's interpreter, by path: another python3 first on PATH (pyenv) would lack numpy.
inline const char* python() {
    return "/usr/bin/python3";
}

inline bool have_numpy() {
    return run_program(python(), {"-c", "import numpy"}).exit_code == 0;
}

struct NumpyPresent {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result ok(have_numpy());
        ok.message() << "/usr/bin/python3 has no numpy (python3-numpy): skipping the NumPy "
                        "reference";
        return ok;
    }
};

inline fs::path reference_script() {
    return test_data().parent_path() / "compare" / "compare_reference.py";
}

// `ckhost compare ARGS --json`: the document, with the exit code required to be `code`.
inline json compare_json(std::vector<std::string> args, int code = 0) {
    args.insert(args.begin(), "compare");
    args.push_back("--json");
    const RunResult r = run_ckhost(args);
    BOOST_TEST_REQUIRE(r.exit_code == code, r.err);
    return json::parse(r.out);
}

// `input` dequantized to F32 by ckhost's own dequant (the values compare reads), as GGUF.
inline fs::path as_f32(const fs::path& input, const fs::path& out) {
    const RunResult r = run_ckhost({"-q", "--pipeline", "gguf:dequant[to=f32]:gguf", "-i",
                                    input.string(), "-o", out.string(), "--force"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return out;
}

// The NumPy figures of A against B (both all-F32 GGUF), weighted by `imatrix` when given.
inline json numpy_figures(const fs::path& a32, const fs::path& b32, const fs::path& imatrix = {}) {
    std::vector<std::string> args = {reference_script().string(), a32.string(), b32.string()};
    if (!imatrix.empty()) args.push_back(imatrix.string());
    const RunResult r = run_program(python(), args);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return json::parse(r.out);
}

// Two figures agree within float64 rounding (the sums are added in another order).
inline bool same_figure(const json& ours, const json& numpy) {
    if (numpy.is_null() || ours.is_null()) return numpy.is_null() && ours.is_null();
    if (numpy.is_boolean()) return ours == numpy;
    const double x = ours.get<double>(), y = numpy.get<double>();
    return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(y), 1e-3);
}

inline void expect_same_figures(const json& ours, const json& numpy, const std::string& what) {
    for (const char* field : {"identical", "rmse", "max_abs_error", "relative_error", "cosine",
                              "snr_db", "weighted_error", "weighted_snr_db"})
        BOOST_TEST(same_figure(ours.at(field), numpy.at(field)),
                   what << ": " << field << " is " << ours.at(field) << ", NumPy says "
                        << numpy.at(field));
}

// Every figure of `comparison` (one B of a compare document) against NumPy's over the same
// values: each compared tensor's, and the whole model's.
inline void expect_numpy_figures(const json& comparison, const json& numpy) {
    std::size_t compared = 0;
    for (const json& t : comparison.at("tensors")) {
        if (t.at("status") != "compared") continue;
        ++compared;
        const std::string name = t.at("name");
        BOOST_TEST_REQUIRE(numpy.at("tensors").contains(name), name);
        expect_same_figures(t, numpy.at("tensors").at(name), name);
    }
    BOOST_TEST(compared == numpy.at("tensors").size());
    expect_same_figures(comparison.at("model"), numpy.at("model"), "model");
}

// A little safetensors file of F32 tensors: (name, shape outermost first, values).
struct Tensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

inline void write_safetensors(const fs::path& path, const std::vector<Tensor>& tensors) {
    json header = json::object();
    std::vector<unsigned char> data;
    for (const Tensor& t : tensors) {
        const std::size_t begin = data.size();
        data.resize(begin + t.values.size() * sizeof(float));
        ck::le::store_array(data.data() + begin, t.values.data(), t.values.size());
        header[t.name] = {
            {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::vector<unsigned char> file(8);
    for (int i = 0; i < 8; ++i) file[i] = static_cast<unsigned char>(text.size() >> (8 * i));
    file.insert(file.end(), text.begin(), text.end());
    file.insert(file.end(), data.begin(), data.end());
    write_file(path, file);
}

// The entry of `doc` (a compare document) for B file `b` (its file name as given).
inline const json& comparison_of(const json& doc, const fs::path& b) {
    for (const json& c : doc.at("comparisons"))
        if (c.at("b").at("file") == b.string()) return c;
    BOOST_FAIL("no comparison for " << b);
    return doc;
}

inline const json& tensor_of(const json& comparison, const std::string& name) {
    for (const json& t : comparison.at("tensors"))
        if (t.at("name") == name) return t;
    BOOST_FAIL("no tensor " << name);
    return comparison;
}

}  // namespace cktest::compare
