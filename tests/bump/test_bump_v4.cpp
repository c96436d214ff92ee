// bump v4 (`bump[version=4]`, docs/formats/bump-v4.md): byte identity with the reference
// converter's four files (tests/data/golden-v4 for the micro model, ../shared/testdata/golden-v4
// for the rest), the five deliberate differences, every validation of the reference (exit 1,
// the tensor named, nothing left behind) and headpack composing with v4.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bump_test_models.hpp"
#include "ck/ggml_types.hpp"
#include "inspect_output.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_bump_v4 {

namespace fs = std::filesystem;
using cktest::contains;
using cktest::ModelBuilder;

namespace {

constexpr auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
constexpr auto bf16 = static_cast<std::uint32_t>(ck::GgmlType::bf16);
constexpr auto q4_0 = static_cast<std::uint32_t>(ck::GgmlType::q4_0);
constexpr auto q4_k = static_cast<std::uint32_t>(ck::GgmlType::q4_k);

const std::string v4 = "gguf:bump[version=4]";
const std::vector<std::string> v4_files = {"weights.bump", "weights_manifest.json",
                                           "weights_map.json", "config.json"};

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

ModelBuilder sample_model() {
    return ModelBuilder::from_gguf(sample());
}

fs::path committed_golden() {
    return cktest::test_data() / "golden-v4" / "micro-llama-q4_k_m";
}

// The golden manifest as ours reads when the bump file is `weights_path` (the reference ran
// from inside the folder with --output weights.bump: deliberate difference 5).
std::string expected_manifest(const fs::path& golden_dir, const fs::path& weights_path) {
    std::string text = cktest::read_text(golden_dir / "weights_manifest.json");
    const std::string from = "\"weights_path\": \"weights.bump\"";
    const std::size_t at = text.find(from);
    BOOST_TEST_REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(),
                        "\"weights_path\": " + nlohmann::json(weights_path.string()).dump());
}

void expect_json_files(const fs::path& out, const fs::path& golden_dir) {
    BOOST_TEST(cktest::files_equal(out / "config.json", golden_dir / "config.json"));
    BOOST_TEST(cktest::files_equal(out / "weights_map.json", golden_dir / "weights_map.json"));
    BOOST_TEST(cktest::read_text(out / "weights_manifest.json") ==
               expected_manifest(golden_dir, out / "weights.bump"));
}

void expect_golden(const fs::path& input, const fs::path& golden_dir,
                   const std::string& pipeline = v4) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", pipeline, "-i", input.string(), "-o", out.path().string() + "/"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::string sha = cktest::read_text(golden_dir / "weights.bump.sha256");
    BOOST_TEST(cktest::sha256_of_file(out / "weights.bump") == sha.substr(0, 64));
    BOOST_TEST(fs::file_size(out / "weights.bump") ==
               std::stoull(cktest::read_text(golden_dir / "weights.bump.size")));
    if (fs::exists(golden_dir / "weights.bump"))
        BOOST_TEST(cktest::files_equal(out / "weights.bump", golden_dir / "weights.bump"));
    expect_json_files(out.path(), golden_dir);
    auto v = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(v.exit_code == 0, v.err);
}

cktest::RunResult convert(const ModelBuilder& model, const cktest::TempDir& in, const fs::path& out,
                          const std::string& pipeline = v4) {
    model.write(in / "model.gguf");
    return cktest::run_ckhost(
        {"--pipeline", pipeline, "-i", (in / "model.gguf").string(), "-o", out.string() + "/"});
}

// Exit 1, each fragment in stderr, and nothing left behind (not even the output directory).
void expect_refusal(const ModelBuilder& model, const std::vector<std::string>& fragments,
                    const std::string& pipeline = v4) {
    cktest::TempDir in, out;
    auto r = convert(model, in, out / "new", pipeline);
    BOOST_TEST(r.exit_code == 1, r.err);
    for (const auto& f : fragments) BOOST_TEST(contains(r.err, f), "'" << f << "' in: " << r.err);
    BOOST_TEST(out.entries().empty(), "left behind: " << out.entries().size() << " entries");
}

std::vector<std::byte> bf16_of(const std::vector<std::byte>& f32_bytes) {
    std::vector<std::byte> out(f32_bytes.size() / 2);
    for (std::size_t i = 0; i < f32_bytes.size() / 4; ++i)
        std::memcpy(out.data() + 2 * i, f32_bytes.data() + 4 * i + 2, 2);  // the high half
    return out;
}

std::vector<std::byte> widened(const std::vector<std::byte>& bf16_bytes) {
    std::vector<std::byte> out(bf16_bytes.size() * 2, std::byte{0});
    for (std::size_t i = 0; i < bf16_bytes.size() / 2; ++i)
        std::memcpy(out.data() + 4 * i + 2, bf16_bytes.data() + 2 * i, 2);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bump_v4)

BOOST_AUTO_TEST_CASE(micro_q4_k_m_is_byte_identical) {
    expect_golden(sample(), committed_golden());
}

BOOST_AUTO_TEST_CASE(shared_goldens_match,
                     *boost::unit_test::precondition(cktest::SharedDataPresent())) {
    for (const std::string model : {"micro-llama-q4_k_m", "micro-llama-f32", "micro-llama-f16",
                                    "micro-llama-q8_0", "tiny-llama-q4_k_m"}) {
        BOOST_TEST_CONTEXT(model) {
            expect_golden(*cktest::shared_data() / (model + ".gguf"),
                          *cktest::shared_data() / "golden-v4" / model);
        }
    }
}

BOOST_AUTO_TEST_CASE(v3_stays_the_default) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:bump", "-i", sample(), "-o", out.path().string() + "/", "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(out.entries().size() == 2u);  // weights.bump and config.json only
    BOOST_TEST(cktest::read_text(out / "weights.bump").substr(0, 8) == "BUMPWGT3");
}

BOOST_AUTO_TEST_CASE(unknown_version_is_a_usage_error) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost(
        {"--pipeline", "gguf:bump[version=5]", "-i", sample(), "-o", out.path().string() + "/"});
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.err, "option 'version'"), r.err);
    BOOST_TEST(out.entries().empty());
}

BOOST_AUTO_TEST_CASE(json_paths_are_overridable) {
    cktest::TempDir out;
    const fs::path meta = out / "meta";
    auto r = cktest::run_ckhost({"--pipeline",
                                 "gguf:bump[version=4,config=" + (meta / "c.json").string() +
                                     ",manifest=" + (meta / "m.json").string() +
                                     ",map=" + (meta / "w.json").string() + "]",
                                 "-i", sample(), "-o", (out / "w.bump").string(), "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(meta / "c.json", committed_golden() / "config.json"));
    BOOST_TEST(cktest::files_equal(meta / "w.json", committed_golden() / "weights_map.json"));
    BOOST_TEST(cktest::read_text(meta / "m.json") ==
               expected_manifest(committed_golden(), out / "w.bump"));
    BOOST_TEST(cktest::files_equal(out / "w.bump", committed_golden() / "weights.bump"));
    for (const auto& f : {"config.json", "weights_manifest.json", "weights_map.json"})
        BOOST_TEST(!fs::exists(out / f), f);
}

// Difference 1: the golden config says 1e-06 (the model's key); the reference prints 1e-05.
BOOST_AUTO_TEST_CASE(difference_1_rms_norm_eps_from_the_model) {
    cktest::TempDir in, out;
    ModelBuilder m = sample_model();
    m.metadata().set("llama.attention.layer_norm_rms_epsilon", ck::Value::of_f32(2e-5f));
    auto r = convert(m, in, out.path());
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(cktest::read_text(out / "config.json"), "\"rms_norm_eps\": 2e-05"),
               cktest::read_text(out / "config.json"));
}

// Difference 2: BF16 is ggml type 30, widened exactly: the same bytes as F32 of those values.
BOOST_AUTO_TEST_CASE(difference_2_bf16_weights_are_widened) {
    cktest::LlamaShape shape;
    ModelBuilder as_f32 = ModelBuilder::llama_f32(shape);
    ModelBuilder as_bf16 = ModelBuilder::llama_f32(shape);
    for (const std::string name :
         {"token_embd.weight", "blk.0.attn_q.weight", "blk.1.attn_output.weight",
          "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight", "blk.1.ffn_down.weight",
          "output_norm.weight"}) {
        const auto half = bf16_of(as_f32.bytes(name));
        const auto ne = as_f32.info(name).ne;
        as_bf16.set_tensor(name, bf16, ne, half);
        as_f32.set_tensor(name, f32, ne, widened(half));
    }
    cktest::TempDir in1, in2, out1, out2;
    auto r1 = convert(as_f32, in1, out1.path());
    auto r2 = convert(as_bf16, in2, out2.path());
    BOOST_TEST_REQUIRE(r1.exit_code == 0, r1.err);
    BOOST_TEST_REQUIRE(r2.exit_code == 0, r2.err);
    BOOST_TEST(cktest::files_equal(out1 / "weights.bump", out2 / "weights.bump"));
}

// Difference 3: attention biases (qwen2) have no v4 slot; refused rather than dropped.
BOOST_AUTO_TEST_CASE(difference_3_biases_are_refused) {
    cktest::LlamaShape shape;
    shape.qkv_biases = true;
    expect_refusal(ModelBuilder::llama_f32(shape), {"blk.0.attn_q.bias", "no bias slot"});
}

// Difference 4: a failure half way through leaves none of the four files.
BOOST_AUTO_TEST_CASE(difference_4_failure_halfway_leaves_nothing) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--plugin-dir", cktest::test_plugin_dir().string(), "--pipeline",
                                 "gguf:testkit[fail_at=15,fail_with=ck]:bump[version=4]", "-i",
                                 sample(), "-o", (out / "new" / "dir").string() + "/"});
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "testkit failed on purpose"), r.err);
    BOOST_TEST(out.entries().empty());
}

// Difference 5: weights_path is the bump file's path as given with -o.
BOOST_AUTO_TEST_CASE(difference_5_weights_path_as_given) {
    cktest::TempDir out;
    const fs::path bump = out / "sub" / "model.bump";
    auto r = cktest::run_ckhost({"--pipeline", v4, "-i", sample(), "-o", bump.string(), "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto manifest = nlohmann::json::parse(cktest::read_text(out / "sub" / "weights_manifest.json"));
    BOOST_TEST(manifest["weights_path"].get<std::string>() == bump.string());
}

BOOST_AUTO_TEST_CASE(missing_tensors_are_named) {
    for (const std::string name :
         {"token_embd.weight", "output_norm.weight", "blk.1.attn_norm.weight",
          "blk.0.attn_k.weight", "blk.1.ffn_up.weight", "blk.0.ffn_down.weight"}) {
        BOOST_TEST_CONTEXT(name) {
            ModelBuilder m = sample_model();
            m.remove_tensor(name);
            expect_refusal(m, {name, "missing"});
        }
    }
}

BOOST_AUTO_TEST_CASE(wrong_shapes_are_named) {
    ModelBuilder m = sample_model();
    m.set_zeros("blk.0.attn_k.weight", q4_k, {256, 256});
    expect_refusal(m, {"blk.0.attn_k.weight", "[256, 256]", "expected [256, 128]"});
    ModelBuilder d = sample_model();
    d.set_zeros("blk.1.ffn_down.weight", f32, {256, 768});
    expect_refusal(d, {"blk.1.ffn_down.weight", "expected [768, 256]"});
}

BOOST_AUTO_TEST_CASE(gate_and_up_dtype_mismatch_is_named) {
    ModelBuilder m = sample_model();
    m.set_zeros("blk.0.ffn_up.weight", f32, {256, 768});
    expect_refusal(m, {"blk.0.ffn_up.weight", "blk.0.ffn_gate.weight", "one dtype"});
}

BOOST_AUTO_TEST_CASE(unsupported_types_are_named) {
    ModelBuilder m = sample_model();
    m.set_zeros("token_embd.weight", q4_0, {256, 1024});
    expect_refusal(m, {"token_embd.weight", "q4_0", "cannot be stored in bump v4"});
}

// Headpack at the alignment v4 uses itself gives the same bytes; any other is refused.
BOOST_AUTO_TEST_CASE(headpack_composes) {
    expect_golden(sample(), committed_golden(), "gguf:headpack:bump[version=4]");
    // hd 40: headpack (align=64) and v4 both pad it to 48; headpack[align=128] to 64. F = 200
    // pads to 208: every padding of the F32 path is exercised.
    cktest::LlamaShape shape;
    shape.embed = 160;
    shape.heads = 4;
    shape.kv_heads = 2;
    shape.ffn = 200;
    cktest::TempDir in, out;
    auto padded =
        convert(ModelBuilder::llama_f32(shape), in, out / "a", "gguf:headpack:bump[version=4]");
    BOOST_TEST(padded.exit_code == 0, padded.err);
    auto plain = convert(ModelBuilder::llama_f32(shape), in, out / "b");
    BOOST_TEST_REQUIRE(plain.exit_code == 0, plain.err);
    BOOST_TEST(cktest::files_equal(out / "a" / "weights.bump", out / "b" / "weights.bump"));
    expect_refusal(ModelBuilder::llama_f32(shape), {"aligned_head_dim", "bump v4 pads them itself"},
                   "gguf:headpack[align=128]:bump[version=4]");
}

BOOST_AUTO_TEST_CASE(inspect_shows_header_dtype_table_and_entries) {
    auto r = cktest::run_ckhost(
        {"inspect", (committed_golden() / "weights.bump").string(), "--tensors"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    for (std::string line :
         {": bump\n", "  magic: BUMPWGT4\n", "  version: 4\n", "  num_layers: 2\n",
          "  intermediate_size: 768\n", "  num_kv_heads: 2\n", "  aligned_intermediate: 768\n",
          "  dtype table entries: 19\n", "  dtype table Q4_K: 11\n", "  dtype table Q6_K: 3\n",
          "  dtype table FP32: 5\n", "  lm_head: lm_head_weight (untied)\n", "tensors: 19",
          // entry, dtype, shape, elements, bytes, file offset: the golden manifest's values
          "  token_emb  q4_K  [256, 1024]  262,144  147456  151\n",
          "  layer.0.w1  q4_K  [256, 1536]  393,216  221184  260247\n",
          "  lm_head_weight  q6_K  [256, 1024]  262,144  215040  1096599\n"})
        BOOST_TEST(contains(cktest::squeezed(r.out), line), "'" << line << "' in:\n" << r.out);
}

// verify: checksum, size, and the manifest against the dtype table and the file.
BOOST_AUTO_TEST_CASE(verify_checks_checksum_size_and_manifest) {
    auto fresh = [](cktest::TempDir& dir) {
        for (const auto& f : v4_files) fs::copy_file(committed_golden() / f, dir / f);
        fs::permissions(dir / "weights.bump", fs::perms::owner_write, fs::perm_options::add);
        fs::permissions(dir / "weights_manifest.json", fs::perms::owner_write,
                        fs::perm_options::add);
        return (dir / "weights.bump").string();
    };
    auto verify = [](const std::string& bump) { return cktest::run_ckhost({"verify", bump}); };
    {
        cktest::TempDir dir;
        auto r = verify(fresh(dir));
        BOOST_TEST(r.exit_code == 0, r.err);
    }
    {
        cktest::TempDir dir;
        const std::string bump = fresh(dir);
        std::fstream f(bump, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(200000);
        f.put('\x55');
        f.close();
        auto r = verify(bump);
        BOOST_TEST(r.exit_code == 1);
        BOOST_TEST(contains(r.err, "checksum mismatch"), r.err);
    }
    {
        cktest::TempDir dir;
        const std::string bump = fresh(dir);
        fs::resize_file(bump, fs::file_size(bump) + 7);
        auto r = verify(bump);
        BOOST_TEST(r.exit_code == 1);
        BOOST_TEST(contains(r.err, "7 bytes after the last entry"), r.err);
    }
    auto edit_manifest = [&](const std::string& from, const std::string& to) {
        cktest::TempDir dir;
        const std::string bump = fresh(dir);
        std::string text = cktest::read_text(dir / "weights_manifest.json");
        const auto at = text.find(from);
        BOOST_TEST_REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        std::ofstream(dir / "weights_manifest.json", std::ios::binary) << text;
        return verify(bump);
    };
    auto r = edit_manifest("\"file_offset\": 148631", "\"file_offset\": 148632");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "layer.0.wq"), r.err);
    BOOST_TEST(contains(r.err, "file_offset 148632, expected 148631"), r.err);
    r = edit_manifest("\"size\": 36864", "\"size\": 36865");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "size 36865, but the header and dtype table give 36864"), r.err);
    r = edit_manifest("\"dtype\": \"q6_k\"", "\"dtype\": \"q4_k\"");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "the dtype table says q6_k"), r.err);
    // Keys missing or of the wrong type are refused with a message, never read blindly.
    r = edit_manifest("\"name\": \"layer.0.wq\",", "");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "expected name, dtype, file_offset and size"), r.err);
    BOOST_TEST(contains(r.err, "layer.0.wq"), r.err);
    r = edit_manifest("\"format\": \"ck-bumpwgt4-manifest-v1\"", "\"format\": 4");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "format is not ck-bumpwgt4-manifest-v1"), r.err);
    // weights_path must lead to this file (the golden's "weights.bump" does, from its folder).
    r = edit_manifest("\"weights_path\": \"weights.bump\"", "\"weights_path\": \"w/weights.bump\"");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "weights_path"), r.err);
    BOOST_TEST(contains(r.err, "\"w/weights.bump\" does not lead to"), r.err);
    {
        // The reference's form: relative to where the conversion ran (here, where ckhost runs).
        cktest::TempDir dir;
        const std::string bump = fresh(dir);
        const fs::path from_here = fs::relative(bump, fs::current_path());
        std::string text = cktest::read_text(dir / "weights_manifest.json");
        const std::string key = "\"weights_path\": \"weights.bump\"";
        text.replace(text.find(key), key.size(),
                     "\"weights_path\": " + nlohmann::json(from_here.string()).dump());
        std::ofstream(dir / "weights_manifest.json", std::ios::binary) << text;
        auto v = verify(bump);
        BOOST_TEST(v.exit_code == 0, from_here << ": " << v.err);
    }
    r = edit_manifest("\"weights_path\": \"weights.bump\"", "\"weights_path\": 1");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "weights_path"), r.err);
    BOOST_TEST(contains(r.err, "missing or not a string"), r.err);
}

// Without its manifest beside it C-Kernel-Engine's runtime cannot load the file: verify fails,
// naming the manifest it looked for; inspect still shows the file and says the manifest is
// absent.
BOOST_AUTO_TEST_CASE(missing_manifest_fails_verify) {
    cktest::TempDir dir;
    fs::copy_file(committed_golden() / "weights.bump", dir / "weights.bump");
    const std::string bump = (dir / "weights.bump").string();
    auto v = cktest::run_ckhost({"verify", bump});
    BOOST_TEST(v.exit_code == 1, v.err);
    BOOST_TEST(contains(v.err, (dir / "weights_manifest.json").string()), v.err);
    BOOST_TEST(contains(v.err, "not found"), v.err);
    BOOST_TEST(dir.entries().size() == 1u);  // verify writes nothing
    auto i = cktest::run_ckhost({"inspect", bump});
    BOOST_TEST(i.exit_code == 0, i.err);
    BOOST_TEST(contains(cktest::squeezed(i.out), "  manifest: absent\n"), i.out);
}

// `cp -r out4 moved4`: the manifest's weights_path (the path as given with -o) still names
// out4's file, so verify of the moved copy fails, naming the key and the manifest; with
// weights_path=relative it names the file from the manifest's folder and the copy verifies.
BOOST_AUTO_TEST_CASE(moved_folder_fails_verify_unless_weights_path_is_relative) {
    cktest::TempDir dir;
    auto convert_and_move = [&](const std::string& pipeline, const std::string& name) {
        const fs::path out = dir / name, moved = dir / (name + "-moved");
        auto r = cktest::run_ckhost(
            {"--pipeline", pipeline, "-i", sample(), "-o", out.string() + "/", "--quiet"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        fs::copy(out, moved, fs::copy_options::recursive);
        return std::pair{out, moved};
    };
    const auto [out, moved] = convert_and_move(v4, "out4");
    auto original = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(original.exit_code == 0, original.err);
    auto stale = cktest::run_ckhost({"verify", (moved / "weights.bump").string()});
    BOOST_TEST(stale.exit_code == 1, stale.err);
    BOOST_TEST(contains(stale.err, (moved / "weights_manifest.json").string()), stale.err);
    BOOST_TEST(contains(stale.err, "weights_path"), stale.err);
    BOOST_TEST(contains(stale.err, "does not lead to " + (moved / "weights.bump").string()),
               stale.err);
    BOOST_TEST(contains(stale.err, "weights_path=relative"), stale.err);
    fs::remove_all(out);  // now it leads nowhere at all
    stale = cktest::run_ckhost({"verify", (moved / "weights.bump").string()});
    BOOST_TEST(stale.exit_code == 1, stale.err);

    const auto [rel, rel_moved] =
        convert_and_move("gguf:bump[version=4,weights_path=relative]", "rel");
    auto manifest = nlohmann::json::parse(cktest::read_text(rel_moved / "weights_manifest.json"));
    BOOST_TEST(manifest["weights_path"].get<std::string>() == "weights.bump");
    // The golden manifest's form: the same bytes as the reference's, made inside the folder.
    BOOST_TEST(cktest::files_equal(rel / "weights_manifest.json",
                                   committed_golden() / "weights_manifest.json"));
    for (const fs::path& folder : {rel, rel_moved}) {
        auto r = cktest::run_ckhost({"verify", (folder / "weights.bump").string()});
        BOOST_TEST(r.exit_code == 0, folder << ": " << r.err);
    }
}

// The reference's form, relative to where the conversion ran ("out4/weights.bump" from out4's
// parent): it verifies (wherever verify runs from), a copy made by `cp -r out4 moved4` does not.
BOOST_AUTO_TEST_CASE(the_references_relative_form_verifies_in_place_but_not_in_a_copy) {
    cktest::TempDir dir;
    const fs::path out = dir / "out4", moved = dir / "moved4";
    auto r =
        cktest::run_ckhost({"--pipeline", v4, "-i", sample(), "-o", out.string() + "/", "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const std::string given =
        "\"weights_path\": " + nlohmann::json((out / "weights.bump").string()).dump();
    std::string text = cktest::read_text(out / "weights_manifest.json");
    BOOST_TEST_REQUIRE(text.find(given) != std::string::npos);
    text.replace(text.find(given), given.size(), "\"weights_path\": \"out4/weights.bump\"");
    std::ofstream(out / "weights_manifest.json", std::ios::binary) << text;
    fs::copy(out, moved, fs::copy_options::recursive);
    auto in_place = cktest::run_ckhost({"verify", (out / "weights.bump").string()});
    BOOST_TEST(in_place.exit_code == 0, in_place.err);
    auto copy = cktest::run_ckhost({"verify", (moved / "weights.bump").string()});
    BOOST_TEST(copy.exit_code == 1, copy.err);
    BOOST_TEST(contains(copy.err, "\"out4/weights.bump\" does not lead to"), copy.err);
}

// weights_path=relative with the manifest elsewhere: the path from the manifest's folder.
BOOST_AUTO_TEST_CASE(relative_weights_path_from_a_manifest_elsewhere) {
    cktest::TempDir out;
    auto r =
        cktest::run_ckhost({"--pipeline",
                            "gguf:bump[version=4,weights_path=relative,manifest=" +
                                (out / "meta" / "m.json").string() + "]",
                            "-i", sample(), "-o", (out / "model" / "w.bump").string(), "--quiet"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    auto manifest = nlohmann::json::parse(cktest::read_text(out / "meta" / "m.json"));
    BOOST_TEST(manifest["weights_path"].get<std::string>() == "../model/w.bump");
}

BOOST_AUTO_TEST_CASE(unknown_weights_path_form_is_a_usage_error) {
    cktest::TempDir out;
    auto r = cktest::run_ckhost({"--pipeline", "gguf:bump[version=4,weights_path=absolute]", "-i",
                                 sample(), "-o", out.path().string() + "/"});
    BOOST_TEST(r.exit_code == 2, r.err);
    BOOST_TEST(contains(r.err, "weights_path"), r.err);
    BOOST_TEST(out.entries().empty());
}

// A v4 refusal speaks of v4: a model without token_embd (issue 28: it said "bump v3 and head
// packing"), with or without headpack before the writer.
BOOST_AUTO_TEST_CASE(missing_token_embd_is_refused_in_v4_words) {
    ModelBuilder m = sample_model();
    m.remove_tensor("token_embd.weight");
    for (const std::string& pipeline : {v4, std::string("gguf:headpack:bump[version=4]")}) {
        BOOST_TEST_CONTEXT(pipeline) {
            cktest::TempDir in, out;
            auto r = convert(m, in, out / "new", pipeline);
            BOOST_TEST(r.exit_code == 1, r.err);
            BOOST_TEST(contains(r.err, "token_embd.weight"), r.err);
            BOOST_TEST(!contains(r.err, "bump v3"), r.err);
            BOOST_TEST(out.entries().empty());
        }
    }
    expect_refusal(m, {"token_embd.weight", "bump v4 needs"});
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_bump_v4
