// The hf writer (issue 31), the hf reader's inverse, through the real ckhost: every checkpoint
// in ../shared/testdata/hf and hf-arch survives hf:gguf then gguf:hf bit for bit, and hf:gguf of
// the export gives the first GGUF again byte for byte; from quantized GGUFs (tests/data, so in
// CI) every exported tensor is ckhost's own dequantization, unpermuted, renamed and rounded to
// the dtype; save_pretrained's shards and index; row blocks cut anywhere; Gemma's norm shift
// undone within its stated bound; and the refusals, with the output folder left as it was.
#include <boost/test/unit_test.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "checkpoint_files.hpp"
#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/output.hpp"
#include "ck/support/little_endian.hpp"
#include "export_tensors.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_hf_writer {

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using cktest::contains;
using cktest::hf::convert;
using json = nlohmann::ordered_json;

namespace {

// One tensor of a checkpoint folder, as its safetensors file has it.
struct Tensor {
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::vector<unsigned char> bytes;
    std::string file;
};
using Tensors = std::map<std::string, Tensor>;

void add_file_tensors(const fs::path& file, Tensors& tensors) {
    const cktest::hf::Safetensors st = cktest::hf::read_safetensors(file);
    for (const auto& item : st.header.items()) {
        if (item.key() == "__metadata__") continue;
        const json& e = item.value();
        const auto begin = e["data_offsets"][0].get<long>(), end = e["data_offsets"][1].get<long>();
        tensors[item.key()] = {e["dtype"].get<std::string>(),
                               e["shape"].get<std::vector<std::int64_t>>(),
                               {st.data.begin() + begin, st.data.begin() + end},
                               file.filename().string()};
    }
}

// Every tensor of a checkpoint folder: model.safetensors, or the shards its index names.
Tensors checkpoint_tensors(const fs::path& folder) {
    Tensors tensors;
    if (!fs::exists(folder / "model.safetensors.index.json")) {
        add_file_tensors(folder / "model.safetensors", tensors);
        return tensors;
    }
    const json index = json::parse(std::ifstream(folder / "model.safetensors.index.json"));
    std::set<std::string> files;
    for (const auto& item : index["weight_map"].items()) files.insert(item.value());
    for (const std::string& file : files) add_file_tensors(folder / file, tensors);
    return tensors;
}

void expect_same_tensors(const Tensors& expected, const Tensors& got) {
    std::set<std::string> expected_names, got_names;
    for (const auto& entry : expected) expected_names.insert(entry.first);
    for (const auto& entry : got) got_names.insert(entry.first);
    BOOST_TEST(expected_names == got_names);
    for (const auto& [name, want] : expected) {
        const auto it = got.find(name);
        if (it == got.end()) continue;
        BOOST_TEST_CONTEXT(name) {
            BOOST_TEST(it->second.dtype == want.dtype);
            BOOST_TEST(it->second.shape == want.shape);
            BOOST_TEST((it->second.bytes == want.bytes));
        }
    }
}

// A file whose whole content is a relative path to a file beside the folder is a symbolic link
// that lost its kind in a copy of the test data (hf-arch/qwen3moe-bf16/tokenizer.json).
fs::path link_target(const fs::path& file) {
    if (fs::file_size(file) >= 256) return file;
    std::string text;
    std::getline(std::ifstream(file), text);
    const fs::path target = file.parent_path() / text;
    return text.starts_with("../") && fs::is_regular_file(target) ? target : file;
}

// The checkpoint as one folder named `name` in `dir`: links resolved, and the shards of a
// sharded checkpoint merged into one model.safetensors (tensor order kept). The GGUF's tensor
// order follows the checkpoint's shards (shards by name, each one's tensors sorted), which a
// GGUF does not record; an export in one file gives the GGUF of the checkpoint in one file.
fs::path one_file_checkpoint(const fs::path& from, const fs::path& dir, const std::string& name) {
    const fs::path to = dir / name;
    fs::create_directories(to);
    cktest::hf::Safetensors merged;
    merged.header = json::object();
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(from)) {
        const std::string file = entry.path().filename().string();
        const bool weights = file == "model.safetensors.index.json" ||
                             (file.starts_with("model") && file.ends_with(".safetensors"));
        if (!weights) fs::copy_file(link_target(entry.path()), to / file);
    }
    const json index = fs::exists(from / "model.safetensors.index.json")
                           ? json::parse(std::ifstream(from / "model.safetensors.index.json"))
                           : json{{"weight_map", {{"", "model.safetensors"}}}};
    std::set<std::string> shards;
    for (const auto& item : index["weight_map"].items()) shards.insert(item.value());
    for (const std::string& shard : shards) {
        const cktest::hf::Safetensors st = cktest::hf::read_safetensors(from / shard);
        for (const std::string& tensor : cktest::hf::tensor_names(st)) {
            json entry = st.header.at(tensor);
            for (json& offset : entry["data_offsets"])
                offset = offset.get<std::size_t>() + merged.data.size();
            merged.header[tensor] = entry;
            names.push_back(tensor);
        }
        merged.data.insert(merged.data.end(), st.data.begin(), st.data.end());
    }
    cktest::hf::write_shard(to / "model.safetensors", merged, names);
    return to;
}

// What `ckhost --pipeline P -i in -o out` leaves: every file under `root` with its bytes.
std::map<std::string, std::vector<unsigned char>> snapshot(const fs::path& root) {
    std::map<std::string, std::vector<unsigned char>> files;
    if (!fs::exists(root)) return files;
    if (fs::is_regular_file(root)) return {{"", cktest::read_file(root)}};
    for (const auto& entry : fs::recursive_directory_iterator(root))
        files[fs::relative(entry.path(), root).string()] = entry.is_regular_file()
                                                               ? cktest::read_file(entry.path())
                                                               : std::vector<unsigned char>{};
    return files;
}

struct Checkpoint {
    const char* set;
    const char* folder;
};
constexpr Checkpoint checkpoints[] = {
    {"hf", "llama-bf16"},
    {"hf-arch", "llama31-bf16"},
    {"hf-arch", "qwen3-bf16"},
    {"hf-arch", "qwen3moe-bf16"},
    {"hf-arch", "mixtral-bf16"},
    {"hf-arch", "gemma2-bf16"},
    {"hf-arch", "gemma3-bf16"},
    {"hf-arch", "phi3-bf16"},
    {"hf-arch", "phi3-longrope-bf16"},
    {"hf-arch", "mistral-nemo-bf16"},
    {"hf-arch", "Phi-3-mini-4k-instruct"},
};

// hf:gguf, gguf:hf into a folder of the original's name (general.name comes from it), hf:gguf
// again.
void check_round_trip(const fs::path& original) {
    const std::string name = original.filename().string();
    cktest::TempDir dir;
    const fs::path source = one_file_checkpoint(original, dir / "source", name);
    auto r = convert("hf:gguf", source, dir / "first.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const fs::path exported = dir / "export" / name;
    r = convert("gguf:hf", dir / "first.gguf", exported);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    // Bit for bit against the original (its shards, where it has them).
    expect_same_tensors(checkpoint_tensors(original), checkpoint_tensors(exported));
    BOOST_TEST(!fs::exists(exported / "model.safetensors.index.json"));
    r = convert("hf:gguf", exported, dir / "second.gguf");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(cktest::files_equal(dir / "first.gguf", dir / "second.gguf"));
    // hf:hf, with no GGUF in between, writes the same folder.
    r = convert("hf:hf", source, dir / "direct" / name);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST((snapshot(dir / "direct" / name) == snapshot(exported)));
}

std::string read_text(const fs::path& file) {
    const auto bytes = cktest::read_file(file);
    return {bytes.begin(), bytes.end()};
}

fs::path quant_data() {
    return cktest::test_data() / "hf-arch-quant";
}

// The quantized GGUFs of today's architectures in tests/data (and the shared tiny Q4_K_M).
std::vector<fs::path> quantized_sources() {
    std::vector<fs::path> files;
    for (const char* m :
         {"llama31", "mixtral", "gemma2", "gemma3", "phi3", "phi3-longrope", "mistral-nemo"})
        files.push_back(quant_data() / (std::string(m) + "-bf16.q4_k_m.gguf"));
    files.push_back(quant_data() / "mixtral-bf16.q8_0.gguf");
    if (const auto shared = cktest::shared_data())
        if (fs::exists(*shared / "quant" / "micro-llama-f16.q4_k_m.gguf"))
            files.push_back(*shared / "quant" / "micro-llama-f16.q4_k_m.gguf");
    return files;
}

struct GgufFile {
    ck::ModelHeader header;
    std::vector<std::vector<std::byte>> data;  // each tensor's bytes
};

GgufFile read_gguf(const fs::path& file) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    GgufFile gguf{reader.open(file), {}};
    for (std::size_t i = 0; i < gguf.header.tensors.size(); ++i) {
        const ck::TensorView view = reader.tensor(i);
        gguf.data.emplace_back(view.bytes().begin(), view.bytes().end());
    }
    return gguf;
}

// F32 `values` rounded to `dtype` as torch does (round to nearest even).
std::vector<unsigned char> as_dtype(const std::vector<float>& values, const std::string& dtype) {
    std::vector<unsigned char> bytes;
    for (const float v : values) {
        if (dtype == "f32") {
            unsigned char bits[4];
            ck::le::store(bits, v);
            bytes.insert(bytes.end(), bits, bits + 4);
            continue;
        }
        const std::uint16_t h =
            dtype == "f16" ? ck::kernels::f32_to_f16_numpy(v) : ck::kernels::f32_to_bf16(v);
        bytes.push_back(static_cast<unsigned char>(h & 0xff));
        bytes.push_back(static_cast<unsigned char>(h >> 8));
    }
    return bytes;
}

// Rows back from llama.cpp's rotary layout: row h*d + j*(d/2) + i = GGUF row h*d + 2*i + j.
std::vector<float> unpermuted(const std::vector<float>& values, std::uint64_t row_length,
                              std::uint64_t head_rows) {
    std::vector<float> out(values.size());
    const std::uint64_t rows = values.size() / row_length, half = head_rows / 2;
    for (std::uint64_t h = 0; h < rows; h += head_rows)
        for (std::uint64_t i = 0; i < half; ++i)
            for (std::uint64_t j = 0; j < 2; ++j)
                std::memcpy(&out[(h + j * half + i) * row_length],
                            &values[(h + 2 * i + j) * row_length], row_length * 4);
    return out;
}

// What the export of a GGUF whose tensors are `f32` (ckhost's dequantization) must hold in
// `dtype`: the plan's names and rows, q/k unpermuted, Gemma's norms - 1, rounded.
Tensors expected_export(const GgufFile& f32, const std::string& dtype) {
    const std::string arch = f32.header.metadata.find("general.architecture")->str();
    const ckplugin::hf::Architecture* architecture = ckplugin::hf::find_architecture_by_arch(arch);
    BOOST_TEST_REQUIRE(architecture != nullptr, arch);
    Tensors expected;
    const std::string name = dtype == "f32" ? "F32" : dtype == "f16" ? "F16" : "BF16";
    using Action = ckplugin::hf::TensorExport::Action;
    for (const auto& e : ckplugin::hf::plan_export(f32.header, *architecture)) {
        const ck::TensorInfo& t = f32.header.tensors[e.source];
        std::vector<float> values(t.elements());
        ck::le::load_array(f32.data[e.source].data(), values.data(), values.size());
        if (e.action == Action::unshift_norm)
            for (float& v : values) v -= 1.0f;
        if (e.action == Action::unpermute_rows)
            values = unpermuted(values, static_cast<std::uint64_t>(t.ne[0]), e.head_rows);
        const auto row_length = static_cast<std::size_t>(t.ne[0]);
        for (const auto& part : e.parts) {
            const std::vector<float> run(
                values.begin() + part.first_row * row_length,
                values.begin() + (part.first_row + part.rows) * row_length);
            expected[part.name] = {name, part.shape, as_dtype(run, dtype), ""};
        }
    }
    return expected;
}

// One row block of 1 KiB per thread at most: q/k blocks end inside heads.
const std::vector<std::string> small_blocks = {"--json", "--max-memory", "4K", "--threads", "2"};

std::uint64_t row_blocks_written(const cktest::RunResult& r) {
    return nlohmann::json::parse(r.out).at("compute_ahead").at("row_blocks").get<std::uint64_t>();
}

// hf-arch-quant's Gemma 2 GGUF with an untied output.weight (token_embd's bytes), which
// Gemma2ForCausalLM cannot hold.
void write_gemma2_with_output(const fs::path& to) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    ck::ModelHeader header = reader.open(quant_data() / "gemma2-bf16.q4_k_m.gguf");
    std::size_t embedding = 0;
    while (header.tensors[embedding].name != "token_embd.weight") ++embedding;
    header.tensors.push_back(header.tensors[embedding]);
    header.tensors.back().name = "output.weight";
    ckplugin::gguf::GgufWriter writer(context);
    writer.prepare(header, to);
    ck::OutputSet out(false);
    writer.begin(out);
    for (std::size_t i = 0; i < header.tensors.size(); ++i)
        writer.write(i, reader.tensor(i + 1 == header.tensors.size() ? embedding : i));
    writer.finish();
    out.commit();
}

// `pipeline` is refused with `exit_code`, its message holding `parts`, and `folder` is as it was.
void expect_refused(const std::string& pipeline, const fs::path& in, const fs::path& folder,
                    int exit_code, const std::vector<std::string>& parts,
                    std::vector<std::string> options = {}) {
    const auto before = snapshot(folder);
    const bool existed = fs::exists(folder);
    const auto r = convert(pipeline, in, folder, std::move(options));
    BOOST_TEST(r.exit_code == exit_code, r.err);
    for (const std::string& part : parts) BOOST_TEST(contains(r.err, part), r.err);
    BOOST_TEST(fs::exists(folder) == existed);
    BOOST_TEST((snapshot(folder) == before));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hf_writer)

BOOST_AUTO_TEST_CASE(every_checkpoint_round_trips_bit_for_bit,
                     *utf::precondition(cktest::SharedDataPresent())) {
    for (const Checkpoint& c : checkpoints) {
        const fs::path original = *cktest::shared_data() / c.set / c.folder;
        if (!fs::is_directory(original)) {
            BOOST_TEST_MESSAGE("absent, skipped: " << original);
            continue;
        }
        BOOST_TEST_CONTEXT(c.folder) {
            check_round_trip(original);
        }
    }
}

BOOST_AUTO_TEST_CASE(quantized_sources_give_ckhosts_dequantization_in_each_dtype) {
    for (const fs::path& source : quantized_sources()) {
        cktest::TempDir dir;
        auto r = convert("gguf:dequant[to=f32]:gguf", source, dir / "f32.gguf");
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const GgufFile f32 = read_gguf(dir / "f32.gguf");
        for (const std::string dtype : {"bf16", "f16", "f32"}) {
            BOOST_TEST_CONTEXT(source.filename() << " " << dtype) {
                const fs::path out = dir / dtype / "model";
                r = convert("gguf:hf[dtype=" + dtype + "]", source, out);
                BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
                expect_same_tensors(expected_export(f32, dtype), checkpoint_tensors(out));
            }
        }
    }
}

// Without dtype=: a quantized source gives BF16, and says so.
BOOST_AUTO_TEST_CASE(a_quantized_source_gives_bf16_by_default) {
    cktest::TempDir dir;
    const auto r = convert("gguf:hf", quant_data() / "llama31-bf16.q4_k_m.gguf", dir / "out");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "weights written as BF16"), r.err);
    BOOST_TEST(contains(r.err, "MOSTLY_Q4_K_M"), r.err);
    for (const auto& [name, t] : checkpoint_tensors(dir / "out"))
        BOOST_TEST(t.dtype == "BF16", name);
}

// Row blocks cut anywhere (1 KiB per thread: inside heads, inside experts) give the same files
// as whole tensors.
BOOST_AUTO_TEST_CASE(row_blocks_cut_anywhere_give_the_same_checkpoint) {
    for (const char* file : {"llama31-bf16.q4_k_m.gguf", "mistral-nemo-bf16.q4_k_m.gguf",
                             "mixtral-bf16.q8_0.gguf", "gemma3-bf16.q4_k_m.gguf"}) {
        BOOST_TEST_CONTEXT(file) {
            cktest::TempDir dir;
            auto whole = convert("gguf:hf", quant_data() / file, dir / "whole");
            BOOST_TEST_REQUIRE(whole.exit_code == 0, whole.err);
            auto blocks = convert("gguf:hf", quant_data() / file, dir / "blocks", small_blocks);
            BOOST_TEST_REQUIRE(blocks.exit_code == 0, blocks.err);
            BOOST_TEST(row_blocks_written(blocks) > 0u);
            BOOST_TEST((snapshot(dir / "whole") == snapshot(dir / "blocks")));
        }
    }
}

// max_shard_size as save_pretrained takes it: shards named model-0000K-of-0000N, each a
// complete safetensors file, cut before the tensor that would pass the size; the index's
// total_size the sum of the tensors' bytes, its weight_map sorted and right; the tensors those
// of the export in one file (Mixtral's experts: a stack may be cut between two shards).
BOOST_AUTO_TEST_CASE(a_small_max_shard_size_gives_shards_and_an_index) {
    cktest::TempDir dir;
    const fs::path source = quant_data() / "mixtral-bf16.q8_0.gguf";
    auto r = convert("gguf:hf", source, dir / "one");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    constexpr std::uint64_t max = 50000;
    r = convert("gguf:hf[max_shard_size=50KB]", source, dir / "sharded");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(!fs::exists(dir / "sharded" / "model.safetensors"));
    const std::string text = read_text(dir / "sharded" / "model.safetensors.index.json");
    BOOST_TEST(text.starts_with("{\n  \"metadata\": {\n    \"total_size\": "), text);
    BOOST_TEST(text.ends_with("\"\n  }\n}\n"), text);
    const json index = json::parse(text);
    const Tensors one = checkpoint_tensors(dir / "one"),
                  sharded = checkpoint_tensors(dir / "sharded");
    expect_same_tensors(one, sharded);
    std::uint64_t total = 0;
    for (const auto& [name, t] : sharded) {
        total += t.bytes.size();
        BOOST_TEST(index["weight_map"].value(name, "") == t.file, name);
    }
    BOOST_TEST(index["metadata"]["total_size"].get<std::uint64_t>() == total);
    BOOST_TEST(index["weight_map"].size() == sharded.size());
    std::set<std::string> files;
    for (const auto& item : index["weight_map"].items()) files.insert(item.value());
    BOOST_TEST_REQUIRE(files.size() > 2u);
    std::vector<std::uint64_t> bytes, first_tensor, tensors;
    std::size_t k = 0;
    for (const std::string& file : files) {
        char want[64];
        std::snprintf(want, sizeof want, "model-%05zu-of-%05zu.safetensors", ++k, files.size());
        BOOST_TEST(file == want);
        const auto st = cktest::hf::read_safetensors(dir / "sharded" / file);
        const auto raw = cktest::read_file(dir / "sharded" / file);
        BOOST_TEST(ck::le::load<std::uint64_t>(raw.data()) % 8 == 0u);  // the header's length
        BOOST_TEST(st.header.begin().key() == "__metadata__");
        BOOST_TEST(st.header["__metadata__"] == json({{"format", "pt"}}));
        std::uint64_t offset = 0;
        for (const std::string& name : cktest::hf::tensor_names(st)) {
            if (offset == 0) first_tensor.push_back(sharded.at(name).bytes.size());
            BOOST_TEST(st.header[name]["data_offsets"][0].get<std::uint64_t>() == offset);
            offset = st.header[name]["data_offsets"][1].get<std::uint64_t>();
        }
        BOOST_TEST(st.data.size() == offset);
        bytes.push_back(offset);
        tensors.push_back(cktest::hf::tensor_names(st).size());
    }
    // save_pretrained's cut: a shard ends where its next tensor would take it past the maximum.
    for (std::size_t s = 0; s + 1 < bytes.size(); ++s) {
        BOOST_TEST(bytes[s] + first_tensor[s + 1] > max);
        BOOST_TEST((bytes[s] <= max || tensors[s] == 1u));
    }
}

BOOST_AUTO_TEST_CASE(an_unknown_architecture_is_refused) {
    cktest::TempDir dir;
    expect_refused("gguf:meta[set=general.architecture=str:gptx]:hf",
                   quant_data() / "llama31-bf16.q4_k_m.gguf", dir / "out", 1,
                   {"general.architecture", "gptx"});
}

BOOST_AUTO_TEST_CASE(a_tokenizer_it_cannot_rebuild_is_refused) {
    cktest::TempDir dir;
    expect_refused("gguf:meta[set=tokenizer.ggml.model=str:bert]:hf",
                   quant_data() / "llama31-bf16.q4_k_m.gguf", dir / "out", 1,
                   {"tokenizer.ggml.model", "bert"});
}

// A GGUF without any tokenizer (weights a tool wrote) still exports, with a warning and no
// tokenizer files.
BOOST_AUTO_TEST_CASE(a_model_without_a_tokenizer_exports_its_weights_with_a_warning) {
    cktest::TempDir dir;
    const auto r = convert("gguf:meta[del=tokenizer.*]:hf",
                           quant_data() / "llama31-bf16.q4_k_m.gguf", dir / "out");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "no tokenizer"), r.err);
    BOOST_TEST(fs::exists(dir / "out" / "config.json"));
    BOOST_TEST(fs::exists(dir / "out" / "model.safetensors"));
    for (const char* name : {"tokenizer.model", "tokenizer.json", "tokenizer_config.json"})
        BOOST_TEST(!fs::exists(dir / "out" / name), name);
}

BOOST_AUTO_TEST_CASE(a_tensor_without_a_hugging_face_name_is_refused) {
    cktest::TempDir dir;
    expect_refused("gguf:meta[rename_tensors=blk\\.1\\.attn_norm=blk.1.attn_mystery]:hf",
                   quant_data() / "llama31-bf16.q4_k_m.gguf", dir / "out", 1,
                   {"tensor 'blk.1.attn_mystery.weight'", "no Hugging Face name"});
}

BOOST_AUTO_TEST_CASE(gemma2_with_an_output_matrix_is_refused) {
    cktest::TempDir dir;
    write_gemma2_with_output(dir / "gemma2-bf16.gguf");
    expect_refused("gguf:hf", dir / "gemma2-bf16.gguf", dir / "out", 1,
                   {"tensor 'output.weight'", "Gemma2ForCausalLM ties lm_head"});
}

BOOST_AUTO_TEST_CASE(a_bad_max_shard_size_is_a_usage_error) {
    cktest::TempDir dir;
    for (const char* size : {"lots", "0", "-5GB", "5 GB"})
        expect_refused(std::string("gguf:hf[max_shard_size=") + size + "]",
                       quant_data() / "llama31-bf16.q4_k_m.gguf", dir / "out", 2,
                       {"max_shard_size"});
}

// An existing checkpoint is replaced only with --force; weights files another export left
// (shards of another count) are refused even then: a reader would mix them with the new ones.
BOOST_AUTO_TEST_CASE(an_existing_folder_needs_force_and_stale_shards_are_refused) {
    cktest::TempDir dir;
    const fs::path source = quant_data() / "llama31-bf16.q4_k_m.gguf";
    auto r = convert("gguf:hf[max_shard_size=100KB]", source, dir / "out");
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST_REQUIRE(fs::exists(dir / "out" / "model-00001-of-00004.safetensors"));
    expect_refused("gguf:hf[max_shard_size=100KB]", source, dir / "out", 1, {"output file exists"});
    r = convert("gguf:hf[max_shard_size=100KB]", source, dir / "out", {"--force"});
    BOOST_TEST(r.exit_code == 0, r.err);
    expect_refused("gguf:hf", source, dir / "out", 1,
                   {"model-00001-of-00004.safetensors", "does not write"}, {"--force"});
    expect_refused("gguf:hf", source, dir / "out" / "config.json", 1, {"not a folder"},
                   {"--force"});
}

// Gemma's norms are stored + 1 (the reader adds it in the checkpoint's precision); the writer
// takes 1 away in F32 and rounds to the dtype. For BF16 checkpoints that is exact unless |x| <
// 2^-16: the largest difference over every BF16 value is 2^-24 (x = 2^-24: 1 + x rounds to 1).
// For F16 checkpoints the reader's F16 rounding of x + 1 loses more: up to 2^-11 for |x| < 1.
// (The Gemma checkpoints of hf-arch come back exactly: the round trip above.)
BOOST_AUTO_TEST_CASE(gemmas_norm_shift_comes_back_within_its_bound) {
    using ck::kernels::bf16_to_f32;
    using ck::kernels::f16_to_f32;
    const auto bf16 = static_cast<std::uint32_t>(ck::GgmlType::bf16);
    const auto f16 = static_cast<std::uint32_t>(ck::GgmlType::f16);
    const auto f32 = static_cast<std::uint32_t>(ck::GgmlType::f32);
    // The writer's unshift of one F32 value to `dtype` (tensor bytes in and out).
    const auto unshifted = [&](float shifted, std::uint32_t dtype) {
        std::byte in[4], out[2];
        ck::le::store(in, shifted);
        ckplugin::hf::convert_values(in, f32, 1, out, dtype, true);
        return ck::le::load<std::uint16_t>(out);
    };
    float worst_bf16 = 0, worst_f16 = 0;
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const auto bits = static_cast<std::uint16_t>(h);
        const float x = bf16_to_f32(bits);
        float shifted = x + 1.0f;  // the reader's shift of a BF16 norm
        if (std::isfinite(shifted))
            worst_bf16 = std::max(worst_bf16, std::fabs(bf16_to_f32(unshifted(shifted, bf16)) - x));
        const float y = f16_to_f32(bits);
        if (!(std::fabs(y) < 1.0f)) continue;
        shifted = f16_to_f32(ck::kernels::f32_to_f16(y + 1.0f));  // the reader's F16 shift
        worst_f16 = std::max(worst_f16, std::fabs(f16_to_f32(unshifted(shifted, f16)) - y));
    }
    BOOST_TEST(worst_bf16 == std::ldexp(1.0f, -24));
    BOOST_TEST(worst_f16 == std::ldexp(1.0f, -11));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_hf_writer
