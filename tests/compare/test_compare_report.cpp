// compare's HTML report looked at in a real browser (headless Chromium renders it to a PNG,
// which must have the size asked for and not be blank), what the file holds (nothing from
// elsewhere), and compare jobs of `ckhost batch`.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "batch/batch_jobs.hpp"
#include "compare_helpers.hpp"
#include "test_support.hpp"

namespace unity_test_compare_report {

using cktest::contains;
using namespace cktest::compare;

namespace {

fs::path arch_quant() {
    return cktest::test_data() / "hf-arch-quant";
}

// Debian's `chromium` (scripts/install-deps.sh), or empty.
std::string chromium() {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
        if (cktest::run_program("sh", {"-c", std::string("command -v ") + name}).exit_code == 0)
            return name;
    return "";
}

struct ChromiumPresent {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result ok(!chromium().empty());
        ok.message() << "no chromium on PATH (Debian's chromium, scripts/install-deps.sh): "
                        "skipping the rendering of the report";
        return ok;
    }
};

// The report of one A against two B files, written into `dir`.
fs::path two_quant_report(const cktest::TempDir& dir) {
    const fs::path report = dir / "report.html";
    const auto r = cktest::run_ckhost(
        {"compare", (arch_quant() / "mixtral-bf16.q8_0.gguf").string(),
         (arch_quant() / "mixtral-bf16.q4_k_m.gguf").string(),
         (arch_quant() / "head72-bf16.q4_k_m.gguf").string(), "--report", report.string(), "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return report;
}

std::string text_of(const fs::path& path) {
    const auto bytes = cktest::read_file(path);
    return {bytes.begin(), bytes.end()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compare_report)

BOOST_AUTO_TEST_CASE(the_report_needs_nothing_from_elsewhere) {
    cktest::TempDir dir;
    const std::string html = text_of(two_quant_report(dir));
    BOOST_TEST(html.starts_with("<!DOCTYPE html>"));
    BOOST_TEST(!contains(html, "<script"));
    BOOST_TEST(!contains(html, "<link"));
    BOOST_TEST(!contains(html, "<img"));
    BOOST_TEST(!contains(html, "@import"));
    // No address but SVG's namespace name, which is never fetched.
    const std::regex address("(https?:)?//[a-z0-9.-]+");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), address);
         it != std::sregex_iterator(); ++it)
        BOOST_TEST(it->str() == "http://www.w3.org", it->str());
    // A heatmap per B, the bars, the table; the tensor B lacks is "not compared".
    BOOST_TEST(std::count(html.begin(), html.end(), '\n') > 50);
    std::size_t svgs = 0;
    for (std::size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at) ++svgs;
    BOOST_TEST(svgs == 4u);  // two heatmaps, the legend, the bar chart
    BOOST_TEST(contains(html, "blk.0.ffn_gate_exps.weight"));
    BOOST_TEST(contains(html, "<th>w-SNR dB</th>") == false);
}

BOOST_AUTO_TEST_CASE(chromium_renders_the_report,
                     *boost::unit_test::precondition(ChromiumPresent())) {
    cktest::TempDir dir;
    const fs::path report = two_quant_report(dir), png = dir / "report.png";
    // Root needs --no-sandbox; a profile of its own keeps the user's untouched.
    const auto r = cktest::run_program(
        chromium(), {"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     "--user-data-dir=" + (dir / "profile").string(), "--window-size=1280,1600",
                     "--screenshot=" + png.string(), "file://" + report.string()});
    BOOST_TEST_REQUIRE(fs::exists(png), r.err);
    const auto summary = cktest::run_program(
        python(), {(reference_script().parent_path() / "png_summary.py").string(), png.string()});
    BOOST_TEST_REQUIRE(summary.exit_code == 0, summary.err);
    const json s = json::parse(summary.out);
    BOOST_TEST(s.at("width") == 1280);
    BOOST_TEST(s.at("height") == 1600);
    // Not blank: the heatmap's and the bars' colours, text, rules.
    BOOST_TEST(s.at("colours").get<int>() > 40, s);
    BOOST_TEST(s.at("ink").get<double>() > 0.03, s);
    if (const char* keep = std::getenv("CKHOST_KEEP_REPORT_PNG"))
        fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(compare_batch)

// A folder of quants, one report each: compare lines among conversions, run again (skipped).
BOOST_AUTO_TEST_CASE(compare_jobs_write_one_report_each) {
    cktest::TempDir dir;
    const std::string a = (arch_quant() / "head72-bf16.gguf").string();
    std::string jobs = "# one report per quant\n";
    for (const char* quant : {"q4_k_m", "q8_0"})
        jobs += "compare " + a + " " +
                (arch_quant() / ("head72-bf16." + std::string(quant) + ".gguf")).string() +
                " --report reports/" + quant + ".html --top 3\n";
    jobs += "gguf:gguf " + a + " copy.gguf\n";
    cktest::write_file(dir / "jobs.txt", {jobs.begin(), jobs.end()});
    auto r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--json", "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err << r.out);
    json doc = json::parse(r.out);
    BOOST_TEST(doc.at("summary").at("ok") == 3);
    const json& job = doc.at("jobs").at(0);
    BOOST_TEST(job.at("pipeline") == "compare");
    BOOST_TEST(job.at("output") == "reports/q4_k_m.html");
    BOOST_TEST(job.at("report").at("command") == "compare");
    BOOST_TEST(job.at("report").at("comparisons").at(0).at("counts").at("compared").get<int>() > 0);
    BOOST_TEST(fs::file_size(dir / "reports" / "q4_k_m.html") > 1000u);
    BOOST_TEST(fs::exists(dir / "reports" / "q8_0.html"));
    // Again: the reports' recipe records say they are up to date.
    r = cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--json", "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    doc = json::parse(r.out);
    BOOST_TEST(doc.at("summary").at("skipped") == 3);
}

BOOST_AUTO_TEST_CASE(json_jobs_and_malformed_lines) {
    cktest::TempDir dir;
    const std::string a = (arch_quant() / "head72-bf16.gguf").string();
    const std::string b = (arch_quant() / "head72-bf16.q8_0.gguf").string();
    const json list = json::array({{{"compare", {a, b}}, {"report", "r.html"}}});
    const std::string text = list.dump();
    cktest::write_file(dir / "jobs.json", {text.begin(), text.end()});
    auto r = cktest::run_ckhost({"batch", (dir / "jobs.json").string(), "-q"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err << r.out);
    BOOST_TEST(fs::exists(dir / "r.html"));
    for (const std::string& bad : {"compare " + a + "\n", "compare " + a + " " + b + " --top 0\n",
                                   "compare " + a + " " + b + " --force\n"}) {
        cktest::write_file(dir / "bad.txt", {bad.begin(), bad.end()});
        r = cktest::run_ckhost({"batch", (dir / "bad.txt").string()});
        BOOST_TEST(r.exit_code == 2, bad);
        BOOST_TEST(contains(r.err, "bad.txt:1: "), r.err);
    }
}

// batch-report --resubmit writes a compare job back as a line that reads as the same job.
BOOST_AUTO_TEST_CASE(compare_lines_read_back_as_the_same_jobs) {
    const auto jobs = ckhost::parse_jobs(
        "compare 'a b.gguf' \"c d.gguf\" e.gguf --report=\"out/r #1.html\" --imatrix m.dat --top "
        "7\n",
        "jobs.txt");
    BOOST_TEST_REQUIRE(jobs.size() == 1u);
    BOOST_TEST_REQUIRE(jobs[0].compare.has_value());
    BOOST_TEST(jobs[0].compare->report == "out/r #1.html");
    ckhost::BatchJob job = jobs[0];
    job.compare->inputs[1] = "c'd \\ \"x\".gguf";  // what a shell line would need quoting for
    const auto back = ckhost::parse_jobs(ckhost::job_line(job), "todo.txt");
    BOOST_TEST_REQUIRE(back.size() == 1u);
    BOOST_TEST_REQUIRE(back[0].compare.has_value());
    BOOST_TEST((back[0].compare->inputs == job.compare->inputs));
    BOOST_TEST(back[0].compare->report == "out/r #1.html");
    BOOST_TEST(back[0].compare->imatrix == "m.dat");
    BOOST_TEST((back[0].compare->top == 7));
    BOOST_TEST(back[0].output == "out/r #1.html");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_compare_report
