// `convert --update` and batch re-runs trust an output only when its recipe record
// (OUTPUT.ckhost.json, host/src/pipeline/recipe.hpp) says the same pipeline made it from the same
// input with the same ckhost and plugins, and it is unchanged since; any other output is converted
// again, saying why. Modification times alone called a Q6_K file made by an old job "up to date"
// after the job asked for Q2_K.
#include <boost/test/unit_test.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "ck/context.hpp"
#include "gguf_reader.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_update {

namespace fs = std::filesystem;
using cktest::contains;
using nlohmann::json;

namespace {

std::string sample() {
    return cktest::sample_model().string();
}

cktest::RunResult update(const std::string& pipeline, const fs::path& out,
                         const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"--pipeline", pipeline,     "-i",      sample(),
                                     "-o",         out.string(), "--update"};
    args.insert(args.end(), more.begin(), more.end());
    return cktest::run_ckhost(args);
}

json update_json(const std::string& pipeline, const fs::path& out) {
    const cktest::RunResult r = update(pipeline, out, {"--json"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    return json::parse(r.out);
}

// The type of token_embd.weight, the sample's first 2-D tensor (looked up by name: quantize
// with a mixture writes llama-quantize's tensor order).
std::uint32_t weight_type(const fs::path& file) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader h = reader.open(file);
    const ck::TensorInfo* t = h.find_tensor("token_embd.weight");
    return t ? t->type : ~0u;
}

json read_json(const fs::path& path) {
    std::ifstream in(path);
    return json::parse(in);
}

void write_json(const fs::path& path, const json& doc) {
    std::ofstream(path) << doc.dump(2);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(update_recipes)

BOOST_AUTO_TEST_CASE(a_changed_pipeline_is_converted_again_saying_why) {
    cktest::TempDir dir;
    const fs::path out = dir / "m.gguf";
    BOOST_TEST_REQUIRE(update("gguf:dequant[to=f16]:gguf", out).exit_code == 0);
    BOOST_TEST(fs::exists(dir / "m.gguf.ckhost.json"));
    BOOST_TEST(weight_type(out) == 1u);  // F16

    const json same = update_json("gguf:dequant[to=f16]:gguf", out);
    BOOST_TEST(same["up_to_date"].get<bool>(), same.dump());

    // The job now asks for F32: the F16 file is newer than the input, and still not the result.
    const cktest::RunResult changed = update("gguf:dequant[to=f32]:gguf", out);
    BOOST_TEST(changed.exit_code == 0, changed.err);
    BOOST_TEST(contains(changed.err, "the pipeline changed"), changed.err);
    BOOST_TEST(contains(changed.err, "gguf:dequant[to=f16]:gguf"), changed.err);
    BOOST_TEST(weight_type(out) == 0u);  // F32
    // Recorded again: the next run is up to date.
    BOOST_TEST(update_json("gguf:dequant[to=f32]:gguf", out)["up_to_date"].get<bool>());
}

BOOST_AUTO_TEST_CASE(an_output_without_a_record_is_not_trusted) {
    cktest::TempDir dir;
    const fs::path out = dir / "m.gguf";
    // Made without --update (or by an older ckhost): newer than the input, but no recipe.
    BOOST_TEST_REQUIRE(
        cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", sample(), "-o", out.string()})
            .exit_code == 0);
    BOOST_TEST(!fs::exists(dir / "m.gguf.ckhost.json"));
    const json r = update_json("gguf:gguf", out);
    BOOST_TEST(!r["up_to_date"].get<bool>());
    BOOST_TEST(contains(r["update_reason"].get<std::string>(), "no recipe is recorded"), r.dump());
    BOOST_TEST(fs::exists(dir / "m.gguf.ckhost.json"));
}

BOOST_AUTO_TEST_CASE(another_ckhost_or_plugin_build_converts_again) {
    cktest::TempDir dir;
    const fs::path out = dir / "m.gguf";
    const fs::path record = dir / "m.gguf.ckhost.json";
    BOOST_TEST_REQUIRE(update("gguf:quantize[mix=q8_0,requantize=1]:gguf", out).exit_code == 0);
    // What an older ckhost would have recorded: another digest of the program.
    json doc = read_json(record);
    doc["recipe"]["ckhost"]["sha256"] = std::string(64, '0');
    write_json(record, doc);
    json r = update_json("gguf:quantize[mix=q8_0,requantize=1]:gguf", out);
    BOOST_TEST(contains(r["update_reason"].get<std::string>(), "ckhost changed"), r.dump());
    // Another build of the quantize plugin.
    doc = read_json(record);
    doc["recipe"]["stages"][1]["plugin_version"] = "0.0.1";
    write_json(record, doc);
    r = update_json("gguf:quantize[mix=q8_0,requantize=1]:gguf", out);
    BOOST_TEST(contains(r["update_reason"].get<std::string>(), "plugin 'quantize'"), r.dump());
}

BOOST_AUTO_TEST_CASE(a_changed_input_or_output_converts_again) {
    cktest::TempDir dir;
    fs::copy_file(sample(), dir / "in.gguf");
    const fs::path out = dir / "m.gguf";
    auto run = [&] {
        const cktest::RunResult r =
            cktest::run_ckhost({"--pipeline", "gguf:gguf", "-i", (dir / "in.gguf").string(), "-o",
                                out.string(), "--update", "--json"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        return json::parse(r.out);
    };
    BOOST_TEST(!run()["up_to_date"].get<bool>());
    BOOST_TEST(run()["up_to_date"].get<bool>());
    // A new download of the same name, as old as the outputs or older: mtimes would trust it.
    fs::copy_file(sample(), dir / "new.gguf");
    fs::last_write_time(dir / "new.gguf", fs::last_write_time(dir / "in.gguf"));
    fs::rename(dir / "new.gguf", dir / "in.gguf");
    json r = run();
    BOOST_TEST(contains(r["update_reason"].get<std::string>(), "the input changed"), r.dump());
    // An output edited since it was written.
    std::ofstream(out, std::ios::app) << "x";
    r = run();
    BOOST_TEST(contains(r["update_reason"].get<std::string>(), "changed since it was written"),
               r.dump());
    BOOST_TEST(cktest::files_equal(sample(), out));
}

BOOST_AUTO_TEST_CASE(a_batch_job_whose_pipeline_changed_is_converted_again) {
    cktest::TempDir dir;
    auto jobs = [&](const std::string& mix) {
        std::ofstream(dir / "jobs.txt") << "gguf:quantize[mix=" << mix << ",requantize=1]:gguf "
                                        << sample() << " " << (dir / "m.gguf").string() << "\n";
        const cktest::RunResult r =
            cktest::run_ckhost({"batch", (dir / "jobs.txt").string(), "--json"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        return json::parse(r.out)["jobs"][0];
    };
    BOOST_TEST(jobs("q6_k")["status"].get<std::string>() == "ok");
    BOOST_TEST(jobs("q6_k")["status"].get<std::string>() == "skipped");
    const json again = jobs("q2_k");
    BOOST_TEST(again["status"].get<std::string>() == "ok", again.dump());
    BOOST_TEST(
        contains(again["reason"].get<std::string>(), "converted again: the pipeline changed"),
        again.dump());
    BOOST_TEST(weight_type(dir / "m.gguf") == 10u);  // Q2_K
}

BOOST_AUTO_TEST_CASE(a_failed_conversion_keeps_the_old_outputs_and_their_record) {
    cktest::TempDir dir;
    const fs::path out = dir / "m.gguf";
    BOOST_TEST_REQUIRE(update("gguf:gguf", out).exit_code == 0);
    const auto record = cktest::read_file(dir / "m.gguf.ckhost.json");
    // A pipeline that plans and then fails: nothing replaced, the record still true.
    const cktest::RunResult bad = update("gguf:quantize[mix=q8_0]:gguf", out);
    BOOST_TEST(bad.exit_code == 1, bad.err);
    BOOST_TEST(contains(bad.err, "requantize=1"), bad.err);
    BOOST_TEST(cktest::files_equal(sample(), out));
    BOOST_TEST(cktest::read_file(dir / "m.gguf.ckhost.json") == record);
    BOOST_TEST(update_json("gguf:gguf", out)["up_to_date"].get<bool>());
}

// A record edited by hand, truncated or of another shape is not trusted and never read past its
// shape: the conversion runs again and writes a good one.
BOOST_AUTO_TEST_CASE(a_damaged_record_is_not_trusted) {
    cktest::TempDir dir;
    const fs::path out = dir / "m.gguf";
    const fs::path record = dir / "m.gguf.ckhost.json";
    BOOST_TEST_REQUIRE(update("gguf:gguf", out).exit_code == 0);
    const json good = read_json(record);
    std::vector<std::string> damaged = {"", "{", "[]", "null", "{\"ckhost_recipe\": 1}"};
    for (const char* field : {"recipe", "outputs"}) {
        json d = good;
        d[field] = 7;
        damaged.push_back(d.dump());
    }
    for (const char* field : {"pipeline", "stages", "ckhost"}) {
        json d = good;
        d["recipe"].erase(field);
        damaged.push_back(d.dump());
        d["recipe"][field] = json::array({1, 2});
        damaged.push_back(d.dump());
    }
    json d = good;
    d["recipe"]["stages"][0] = "gguf";
    damaged.push_back(d.dump());
    for (const std::string& text : damaged) {
        std::ofstream(record, std::ios::binary | std::ios::trunc) << text;
        const cktest::RunResult r = update("gguf:gguf", out, {"--json"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, text << ": " << r.err);
        const json report = json::parse(r.out);
        BOOST_TEST(
            contains(report["update_reason"].get<std::string>(), "is not one this ckhost reads"),
            text << ": " << report.dump());
        BOOST_TEST(read_json(record) != json(nullptr));
    }
    BOOST_TEST(update_json("gguf:gguf", out)["up_to_date"].get<bool>());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_update
