// What `ckhost compare` says of tensors it cannot compare (on one side only, of another shape,
// holding NaN or infinite values), with the summaries untouched by them; and its errors, with
// their exit codes and nothing left behind.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "ck/support/little_endian.hpp"
#include "compare_helpers.hpp"
#include "test_support.hpp"

namespace unity_test_compare_problems {

using cktest::contains;
using namespace cktest::compare;

namespace {

std::vector<float> ramp(std::size_t n, float scale) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>(i % 7) - 3.0f);
    return v;
}

// A and B of five tensors: `same` equal, `noisy` with one value off, `reshaped` of another
// shape, `only_a` and `only_b` on one side, and `bad_a` / `bad_b` with a NaN in A and an
// infinity in B.
void write_pair(const fs::path& a, const fs::path& b) {
    std::vector<float> noisy = ramp(32, 0.5f);
    noisy[5] += 0.25f;
    std::vector<float> nan = ramp(8, 1.0f), inf = ramp(8, 1.0f);
    nan[2] = std::numeric_limits<float>::quiet_NaN();
    inf[3] = std::numeric_limits<float>::infinity();
    write_safetensors(a, {{"same", {4, 8}, ramp(32, 1.0f)},
                          {"noisy", {4, 8}, ramp(32, 0.5f)},
                          {"reshaped", {16}, ramp(16, 1.0f)},
                          {"only_a", {2, 2}, ramp(4, 1.0f)},
                          {"bad_a", {8}, nan},
                          {"bad_b", {8}, ramp(8, 1.0f)}});
    write_safetensors(b, {{"same", {4, 8}, ramp(32, 1.0f)},
                          {"noisy", {4, 8}, noisy},
                          {"reshaped", {2, 8}, ramp(16, 1.0f)},
                          {"only_b", {3}, ramp(3, 1.0f)},
                          {"bad_a", {8}, ramp(8, 1.0f)},
                          {"bad_b", {8}, inf}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compare_problems)

BOOST_AUTO_TEST_CASE(every_tensor_not_compared_is_listed_and_counted) {
    cktest::TempDir dir;
    write_pair(dir / "a.safetensors", dir / "b.safetensors");
    const json doc =
        compare_json({(dir / "a.safetensors").string(), (dir / "b.safetensors").string()});
    const json& c = doc.at("comparisons").at(0);
    const json& counts = c.at("counts");
    BOOST_TEST(counts.at("tensors") == 7);
    BOOST_TEST(counts.at("compared") == 2);
    BOOST_TEST(counts.at("identical") == 1);
    BOOST_TEST(counts.at("only_in_a") == 1);
    BOOST_TEST(counts.at("only_in_b") == 1);
    BOOST_TEST(counts.at("shape_mismatch") == 1);
    BOOST_TEST(counts.at("non_finite") == 2);
    BOOST_TEST(tensor_of(c, "only_a").at("status") == "only_in_a");
    BOOST_TEST(tensor_of(c, "only_a").at("type_b").is_null());
    BOOST_TEST(tensor_of(c, "only_b").at("status") == "only_in_b");
    const json& reshaped = tensor_of(c, "reshaped");
    BOOST_TEST(reshaped.at("status") == "shape_mismatch");
    BOOST_TEST(reshaped.at("note") == "A is [16], B is [8, 2]");
    // A NaN is reported for its tensor, with where it is; no figure, and not in the summaries.
    const json& bad_a = tensor_of(c, "bad_a");
    BOOST_TEST(bad_a.at("status") == "non_finite");
    BOOST_TEST(bad_a.at("non_finite") ==
               json({{"nan_a", 1}, {"inf_a", 0}, {"nan_b", 0}, {"inf_b", 0}}));
    BOOST_TEST(bad_a.at("snr_db").is_null());
    BOOST_TEST(tensor_of(c, "bad_b").at("non_finite").at("inf_b") == 1);
    // The model is `same` and `noisy` alone: one error of 0.25 in 64 values.
    const json& model = c.at("model");
    BOOST_TEST(model.at("tensors") == 2);
    BOOST_TEST(model.at("elements") == 64);
    BOOST_TEST(model.at("max_abs_error").get<double>() == 0.25);
    BOOST_TEST(std::fabs(model.at("rmse").get<double>() - std::sqrt(0.0625 / 64)) < 1e-15);
    BOOST_TEST(std::isfinite(model.at("snr_db").get<double>()));
}

BOOST_AUTO_TEST_CASE(the_text_names_every_problem) {
    cktest::TempDir dir;
    write_pair(dir / "a.safetensors", dir / "b.safetensors");
    const auto r = cktest::run_ckhost(
        {"compare", (dir / "a.safetensors").string(), (dir / "b.safetensors").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.out,
                        "2 tensors compared (1 identical), 2 non_finite, 1 only_in_a, "
                        "1 only_in_b, 1 shape_mismatch"),
               r.out);
    BOOST_TEST(contains(r.out, "  only_a: only in A (f32)\n"), r.out);
    BOOST_TEST(contains(r.out, "  reshaped: shapes differ: A is [16], B is [8, 2]\n"), r.out);
    BOOST_TEST(contains(r.out,
                        "  bad_a: not a number: A has 1 NaN, 0 infinite; B has 0 NaN, 0 "
                        "infinite (left out of the summaries)\n"),
               r.out);
    // The NaN tensors are the worst of the table, their figures "nan".
    const auto table = r.out.substr(r.out.find("tensor"));
    BOOST_TEST(contains(table.substr(0, table.find("noisy")), "bad_a"), r.out);
    BOOST_TEST(contains(r.out, " nan"), r.out);
}

// A NaN written into a GGUF (A) and an infinity into another (B), against the clean file.
BOOST_AUTO_TEST_CASE(nan_in_either_gguf) {
    cktest::TempDir dir;
    const fs::path clean = cktest::sample_model();
    const json inspected =
        json::parse(cktest::run_ckhost({"inspect", clean.string(), "--json", "--tensors"}).out);
    std::uint64_t offset = 0;
    for (const json& t : inspected.at("tensors"))
        if (t.at("name") == "blk.1.ffn_norm.weight") offset = t.at("offset");
    BOOST_TEST_REQUIRE(offset > 0u);
    std::vector<unsigned char> bytes = cktest::read_file(clean);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = -std::numeric_limits<float>::infinity();
    ck::le::store(bytes.data() + offset + 4 * 5, nan);
    cktest::write_file(dir / "nan.gguf", bytes);
    ck::le::store(bytes.data() + offset + 4 * 5, inf);
    cktest::write_file(dir / "inf.gguf", bytes);
    const json doc =
        compare_json({(dir / "nan.gguf").string(), clean.string(), (dir / "inf.gguf").string()});
    const json& with_clean = doc.at("comparisons").at(0);
    BOOST_TEST(tensor_of(with_clean, "blk.1.ffn_norm.weight").at("non_finite").at("nan_a") == 1);
    BOOST_TEST(with_clean.at("counts").at("non_finite") == 1);
    BOOST_TEST(with_clean.at("counts").at("compared") == 20);
    // Left out of the summaries, the other 20 tensors compare as the identical files they are.
    BOOST_TEST(with_clean.at("model").at("identical") == true);
    const json& both = tensor_of(doc.at("comparisons").at(1), "blk.1.ffn_norm.weight");
    BOOST_TEST(both.at("non_finite") ==
               json({{"nan_a", 1}, {"inf_a", 0}, {"nan_b", 0}, {"inf_b", 1}}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(compare_errors)

BOOST_AUTO_TEST_CASE(usage_errors_exit_2) {
    const std::string a = cktest::sample_model().string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"compare", a}, "missing B"},
        {{"compare"}, "missing A and B"},
        {{"compare", a, a, "--top", "0"}, "--top 0: expected a number of tensors, at least 1"},
        {{"compare", a, a, "--top", "-3"}, "--top -3"},
        {{"compare", a, "-"}, "standard input is not supported"},
        {{"compare", a, a, "--update"}, "give --report FILE.html too"},
        {{"compare", a, a, "--reprot", "x.html"}, "did you mean '--report'"}};
    for (const auto& [args, message] : cases) {
        const auto r = cktest::run_ckhost(args);
        BOOST_TEST(r.exit_code == 2, args.back());
        BOOST_TEST(contains(r.err, message), r.err);
        BOOST_TEST(r.out.empty());
    }
}

BOOST_AUTO_TEST_CASE(input_errors_exit_1_naming_the_file_and_leave_nothing) {
    cktest::TempDir dir;
    const std::string a = cktest::sample_model().string();
    const std::string report = (dir / "r.html").string();
    auto r = cktest::run_ckhost({"compare", a, (dir / "absent.gguf").string(), "--report", report});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "absent.gguf: cannot open the file: No such file or directory"),
               r.err);
    cktest::write_file(dir / "notes.txt", {'h', 'i', '\n'});
    r = cktest::run_ckhost({"compare", (dir / "notes.txt").string(), a, "--report", report});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "notes.txt: not a "), r.err);
    r = cktest::run_ckhost(
        {"compare", a, a, "--imatrix", (dir / "none.dat").string(), "--report", report});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "none.dat"), r.err);
    BOOST_TEST((dir.entries() == std::vector<std::string>{"notes.txt"}));
    // --json: the same error as a document, with the same exit code.
    r = cktest::run_ckhost({"compare", a, (dir / "absent.gguf").string(), "--json"});
    BOOST_TEST(r.exit_code == 1);
    const json doc = json::parse(r.out);
    BOOST_TEST(doc.at("ok") == false);
    BOOST_TEST(doc.at("command") == "compare");
    BOOST_TEST(doc.at("error").at("kind") == "input");
}

BOOST_AUTO_TEST_CASE(a_report_that_exists_needs_force) {
    cktest::TempDir dir;
    const std::string a = cktest::sample_model().string();
    const fs::path report = dir / "r.html";
    cktest::write_file(report, {'o', 'l', 'd'});
    auto r = cktest::run_ckhost({"compare", a, a, "--report", report.string()});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "r.html"), r.err);
    BOOST_TEST(r.out.empty());
    BOOST_TEST((cktest::read_file(report) == std::vector<unsigned char>{'o', 'l', 'd'}));
    BOOST_TEST(dir.entries().size() == 1u);
    // A report never replaces a file compare reads, even with --force.
    r = cktest::run_ckhost({"compare", report.string(), a, "--report", report.string(), "--force"});
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "which compare reads"), r.err);
    r = cktest::run_ckhost({"compare", a, a, "--report", report.string(), "--force", "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::read_file(report).size() > 1000u);
    BOOST_TEST(dir.entries().size() == 1u);
}

// --update: the recipe record beside the report; a second run with the same files does nothing.
BOOST_AUTO_TEST_CASE(update_skips_a_report_made_from_the_same_files) {
    cktest::TempDir dir;
    const std::string a = cktest::sample_model().string();
    const std::string report = (dir / "r.html").string();
    json doc = compare_json({a, a, "--report", report, "--update"});
    BOOST_TEST(doc.at("up_to_date") == false);
    BOOST_TEST(fs::exists(report + ".ckhost.json"));
    doc = compare_json({a, a, "--report", report, "--update"});
    BOOST_TEST(doc.at("up_to_date") == true);
    BOOST_TEST(!doc.contains("comparisons"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_compare_problems
