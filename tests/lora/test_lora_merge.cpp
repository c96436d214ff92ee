// The LoRA merge without the shared references: the product kernel's variants against the
// scalar reference and against ggml's order of sums written out term by term (the lora README's
// recipe), and `ckhost export-lora` / `lora[...]` on small models and adapters made here, checked
// against a float64 merge; every refusal, with nothing left behind.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ck/context.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/kernels/lora.hpp"
#include "ck/output.hpp"
#include "ck/support/little_endian.hpp"
#include "gguf_reader.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_lora_merge {

namespace fs = std::filesystem;
using ck::Isa;
using ck::kernels::LoraSum;
using cktest::contains;

namespace {

std::vector<float> random_values(std::size_t n, std::uint32_t seed, float spread) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return v;
}

// 16 lanes added as _mm512_reduce_add_ps adds them: i + i+8, then i + i+4, i + i+2, 0 + 1.
float sixteen_lane_sum(std::vector<float> lane) {
    for (std::size_t half = 8; half >= 1; half /= 2)
        for (std::size_t i = 0; i < half; ++i) lane[i] = lane[i] + lane[i + half];
    return lane[0];
}

// One value of the product, term by term, as the lora README describes ggml's sums.
float ggml_dot(const std::vector<float>& p, const std::vector<float>& q, LoraSum sum) {
    const std::size_t rank = p.size();
    if (sum == LoraSum::tiled) {
        std::vector<float> lane(16, 0.0f);
        for (std::size_t k = 0; k < rank; ++k) lane[k % 16] = std::fma(p[k], q[k], lane[k % 16]);
        return sixteen_lane_sum(lane);
    }
    float s = 0.0f;
    const std::size_t fused = rank / 64 * 64;
    if (fused > 0) {
        std::vector<float> lane(64, 0.0f);
        for (std::size_t k = 0; k < fused; ++k) lane[k % 64] = std::fma(p[k], q[k], lane[k % 64]);
        for (std::size_t m = 0; m < 32; ++m) lane[m] = lane[m] + lane[m + 32];
        for (std::size_t m = 0; m < 16; ++m) lane[m] = lane[m] + lane[m + 16];
        lane.resize(16);
        s = sixteen_lane_sum(lane);
    }
    const std::size_t rounded = fused + (rank - fused) / 8 * 8;
    for (std::size_t k = fused; k < rounded; ++k) {
        const float product = p[k] * q[k];
        s = s + product;
    }
    for (std::size_t k = rounded; k < rank; ++k) s = std::fma(p[k], q[k], s);
    return s;
}

struct Product {
    std::size_t rank, columns, rows;
    std::vector<float> by_row, by_column, base;
};

Product random_product(std::size_t rank, std::size_t columns, std::size_t rows) {
    Product p{rank,
              columns,
              rows,
              random_values(rows * rank, 11 + rank, 0.02f),
              random_values(rank * columns, 23 + columns, 0.02f),
              random_values(rows * columns, 37 + rows, 0.05f)};
    return p;
}

std::vector<float> kernel_result(const Product& p, Isa isa, LoraSum sum, float scale) {
    std::vector<float> out = p.base;
    ck::kernels::lora_table(isa).add(p.by_row.data(), p.by_column.data(), p.rank, p.columns, p.rows,
                                     sum, scale, out.data());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lora_kernel)

// Every variant gives the term-by-term recipe's bits, for ranks on every path (tiled; in order
// below 64, with and without a fused tail; 64 fused lanes then the rest) and column counts that
// fill a tile, leave a part of one, or span several.
BOOST_AUTO_TEST_CASE(variants_add_as_ggml_does) {
    const float scale = 0.75f;
    for (const std::size_t rank : {1u, 4u, 6u, 8u, 12u, 16u, 20u, 32u, 48u, 64u, 72u, 100u})
        for (const std::size_t columns : {1u, 3u, 4u, 17u, 64u, 130u})
            for (const LoraSum sum : {LoraSum::tiled, LoraSum::in_order}) {
                const Product p = random_product(rank, columns, 3);
                std::vector<float> expected = p.base;
                for (std::size_t i = 0; i < p.rows; ++i)
                    for (std::size_t c = 0; c < columns; ++c) {
                        std::vector<float> row(p.by_row.begin() + i * rank,
                                               p.by_row.begin() + (i + 1) * rank);
                        std::vector<float> column(rank);
                        for (std::size_t k = 0; k < rank; ++k)
                            column[k] = p.by_column[k * columns + c];
                        const float scaled = ggml_dot(row, column, sum) * scale;
                        expected[i * columns + c] = scaled + expected[i * columns + c];
                    }
                for (const Isa isa : cktest::supported_isas()) {
                    const std::vector<float> got = kernel_result(p, isa, sum, scale);
                    BOOST_TEST_CONTEXT("rank " << rank << ", " << columns << " columns, "
                                               << (sum == LoraSum::tiled ? "tiled" : "in order")
                                               << ", " << ck::isa_name(isa)) {
                        BOOST_TEST(std::memcmp(got.data(), expected.data(), got.size() * 4) == 0);
                    }
                }
            }
}

// ggml takes tinyBLAS for ranks of 16s over columns of 4s and 2 rows or more.
BOOST_AUTO_TEST_CASE(which_sum_ggml_takes) {
    using ck::kernels::ggml_lora_sum;
    BOOST_TEST((ggml_lora_sum(16, 256, 256) == LoraSum::tiled));
    BOOST_TEST((ggml_lora_sum(32, 64, 2) == LoraSum::tiled));
    BOOST_TEST((ggml_lora_sum(8, 256, 256) == LoraSum::in_order));
    BOOST_TEST((ggml_lora_sum(16, 258, 256) == LoraSum::in_order));
    BOOST_TEST((ggml_lora_sum(16, 256, 1) == LoraSum::in_order));
}

// Against float64: each value within a few float32 ulps of the operands' size.
BOOST_AUTO_TEST_CASE(close_to_float64) {
    for (const std::size_t rank : {4u, 8u, 16u, 64u}) {
        const Product p = random_product(rank, 96, 4);
        const float scale = 1.5f;
        const std::vector<float> got =
            kernel_result(p, Isa::scalar, ck::kernels::ggml_lora_sum(rank, 96, 4), scale);
        for (std::size_t i = 0; i < p.rows; ++i)
            for (std::size_t c = 0; c < p.columns; ++c) {
                double exact = 0, magnitude = 0;
                for (std::size_t k = 0; k < rank; ++k) {
                    const double term =
                        double(p.by_row[i * rank + k]) * double(p.by_column[k * p.columns + c]);
                    exact += term;
                    magnitude += std::fabs(term);
                }
                const double w = p.base[i * p.columns + c];
                const double want = w + exact * scale;
                const double bound =
                    (std::fabs(w) + std::fabs(want) + magnitude * scale * double(rank)) * 0x1p-23;
                BOOST_TEST(std::fabs(got[i * p.columns + c] - want) <= bound);
            }
    }
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

using ck::GgmlType;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

struct Tensor {
    std::string name;
    std::uint32_t type;
    std::vector<std::int64_t> ne;
    std::vector<float> values;  // stored as `type` (F32, F16 or, for refusals, zero Q8_0 blocks)
};

std::vector<std::byte> stored_bytes(const Tensor& t) {
    std::vector<std::byte> bytes;
    if (t.type == id(GgmlType::q8_0)) return std::vector<std::byte>(t.values.size() / 32 * 34);
    for (float v : t.values) {
        if (t.type == id(GgmlType::f16)) {
            const std::uint16_t h = ck::kernels::f32_to_f16(v);
            bytes.insert(bytes.end(), {std::byte(h & 0xff), std::byte(h >> 8)});
        } else {
            const auto u = std::bit_cast<std::uint32_t>(v);
            for (int b = 0; b < 4; ++b) bytes.push_back(std::byte((u >> (8 * b)) & 0xff));
        }
    }
    return bytes;
}

// A GGUF file of these keys (strings, u32, f32) and tensors, written by the SDK's writer.
void write_gguf(const fs::path& path, const ck::Metadata& metadata,
                const std::vector<Tensor>& tensors) {
    ck::ModelHeader h;
    h.metadata = metadata;
    for (const Tensor& t : tensors) {
        ck::TensorInfo info;
        info.name = t.name;
        info.type = t.type;
        info.ne = t.ne;
        info.nbytes = stored_bytes(t).size();
        h.tensors.push_back(info);
    }
    ck::RecordingContext context;
    ckplugin::gguf::GgufWriter writer(context);
    writer.prepare(h, path);
    ck::OutputSet out(true);
    writer.begin(out);
    for (std::size_t i = 0; i < tensors.size(); ++i)
        writer.write(i, ck::TensorView::owning(stored_bytes(tensors[i])));
    writer.finish();
    out.commit();
}

Tensor random_tensor(std::string name, std::uint32_t type, std::vector<std::int64_t> ne,
                     std::uint32_t seed, float spread) {
    std::size_t n = 1;
    for (std::int64_t d : ne) n *= static_cast<std::size_t>(d);
    std::vector<float> v = random_values(n, seed, spread);
    // What the file holds: F16 values are what they round to.
    if (type == id(GgmlType::f16))
        for (float& x : v) x = ck::kernels::f16_to_f32(ck::kernels::f32_to_f16(x));
    return {std::move(name), type, std::move(ne), std::move(v)};
}

// A llama-architecture model of one layer: hidden 32, 8 query rows, FFN 16, vocabulary 10.
std::vector<Tensor> base_tensors() {
    return {random_tensor("token_embd.weight", id(GgmlType::f16), {32, 10}, 1, 0.05f),
            random_tensor("blk.0.attn_norm.weight", id(GgmlType::f32), {32}, 2, 1.0f),
            random_tensor("blk.0.attn_q.weight", id(GgmlType::f16), {32, 8}, 3, 0.05f),
            random_tensor("blk.0.ffn_down.weight", id(GgmlType::f32), {16, 32}, 4, 0.05f),
            random_tensor("output.weight", id(GgmlType::f16), {32, 10}, 5, 0.05f)};
}

ck::Metadata base_metadata() {
    ck::Metadata md;
    md.set("general.architecture", ck::Value::of_string("llama"));
    md.set("general.type", ck::Value::of_string("model"));
    md.set("general.file_type", ck::Value::of_u32(1));
    md.set("general.name", ck::Value::of_string("Tiny"));
    return md;
}

ck::Metadata adapter_metadata(float alpha, const std::string& architecture = "llama") {
    ck::Metadata md;
    md.set("general.architecture", ck::Value::of_string(architecture));
    md.set("general.type", ck::Value::of_string("adapter"));
    md.set("adapter.type", ck::Value::of_string("lora"));
    md.set("adapter.lora.alpha", ck::Value::of_f32(alpha));
    return md;
}

// An adapter of rank r for attn_q, ffn_down and token_embd (lora_a stored transposed).
std::vector<Tensor> adapter_tensors(std::int64_t r, std::uint32_t seed, std::uint32_t type) {
    return {random_tensor("blk.0.attn_q.weight.lora_a", type, {32, r}, seed, 0.02f),
            random_tensor("blk.0.attn_q.weight.lora_b", type, {r, 8}, seed + 1, 0.02f),
            random_tensor("blk.0.ffn_down.weight.lora_a", type, {16, r}, seed + 2, 0.02f),
            random_tensor("blk.0.ffn_down.weight.lora_b", type, {r, 32}, seed + 3, 0.02f),
            random_tensor("token_embd.weight.lora_a", type, {r, 10}, seed + 4, 0.02f),
            random_tensor("token_embd.weight.lora_b", type, {r, 32}, seed + 5, 0.02f)};
}

const Tensor& named(const std::vector<Tensor>& tensors, const std::string& name) {
    for (const Tensor& t : tensors)
        if (t.name == name) return t;
    throw std::runtime_error("no tensor " + name);
}

// W + sum_i scale_i B_i A_i in float64, for one base tensor (token_embd: A^T B^T's layout),
// and each value's magnitude: |W| plus every term's |scale_i b a|.
struct Float64Merge {
    std::vector<double> values, magnitudes;
};

Float64Merge float64_merge(const Tensor& base,
                           const std::vector<std::pair<std::vector<Tensor>, float>>& adapters) {
    std::vector<double> w(base.values.begin(), base.values.end()), size(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) size[i] = std::fabs(w[i]);
    const auto columns = static_cast<std::size_t>(base.ne[0]);
    const auto rows = static_cast<std::size_t>(base.ne[1]);
    const bool embedding = base.name == "token_embd.weight";
    for (const auto& [tensors, scale] : adapters) {
        const Tensor& a = named(tensors, base.name + ".lora_a");
        const Tensor& b = named(tensors, base.name + ".lora_b");
        const auto rank = static_cast<std::size_t>(b.ne[0]);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t c = 0; c < columns; ++c) {
                double dot = 0, terms = 0;
                for (std::size_t k = 0; k < rank; ++k) {
                    const double term =
                        embedding ? double(a.values[i * rank + k]) * b.values[c * rank + k]
                                  : double(b.values[i * rank + k]) * a.values[k * columns + c];
                    dot += term;
                    terms += std::fabs(term);
                }
                w[i * columns + c] += double(scale) * dot;
                size[i * columns + c] += std::fabs(double(scale)) * terms;
            }
    }
    return {w, size};
}

ck::ModelHeader read_header(const fs::path& path) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    return reader.open(path);
}

std::vector<float> read_values(const fs::path& path, const std::string& name) {
    ck::RecordingContext context;
    ckplugin::gguf::GgufReader reader(context);
    const ck::ModelHeader h = reader.open(path);
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        if (h.tensors[i].name != name) continue;
        const ck::TensorView v = reader.tensor(i);
        std::vector<float> out(h.tensors[i].elements());
        for (std::size_t k = 0; k < out.size(); ++k) {
            if (h.tensors[i].type == id(GgmlType::f16))
                out[k] = ck::kernels::f16_to_f32(ck::le::load<std::uint16_t>(v.data() + 2 * k));
            else
                out[k] = ck::le::load<float>(v.data() + 4 * k);
        }
        return out;
    }
    throw std::runtime_error("no tensor " + name);
}

// A folder with the base model and two adapters (r = 4 at alpha 8 in F32, r = 16 without alpha
// in F16).
struct MergeFiles {
    cktest::TempDir dir;
    std::vector<Tensor> base = base_tensors();
    std::vector<Tensor> first = adapter_tensors(4, 100, id(GgmlType::f32));
    std::vector<Tensor> second = adapter_tensors(16, 200, id(GgmlType::f16));
    MergeFiles() {
        write_gguf(dir / "base.gguf", base_metadata(), base);
        write_gguf(dir / "a.gguf", adapter_metadata(8.0f), first);
        ck::Metadata no_alpha = adapter_metadata(0);
        no_alpha.erase("adapter.lora.alpha");
        write_gguf(dir / "b.gguf", no_alpha, second);
    }
    fs::path operator/(const std::string& name) const { return dir / name; }
};

// ckhost export-lora in `files`' folder; the run.
cktest::RunResult export_lora(const MergeFiles& files, std::vector<std::string> lora_args,
                              const std::string& output = "merged.gguf") {
    std::vector<std::string> args = {"export-lora", "-m", (files / "base.gguf").string()};
    for (std::string& a : lora_args)
        if (a.ends_with(".gguf") || a.find(".gguf:") != std::string::npos) a = (files / a).string();
    args.insert(args.end(), lora_args.begin(), lora_args.end());
    args.insert(args.end(), {"-o", (files / output).string()});
    return cktest::run_ckhost(args);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lora_merge)

// Two adapters, one scaled: every merged value is the float64 merge rounded to F16 or within a
// ulp of it (F32 tensors: a few float32 ulps); the layout is llama-export-lora's.
BOOST_AUTO_TEST_CASE(export_lora_merges_as_float64_within_the_rounding) {
    MergeFiles files;
    const auto r = export_lora(files, {"--lora", "a.gguf", "--lora-scaled", "b.gguf:0.5"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const ck::ModelHeader h = read_header(files / "merged.gguf");
    std::vector<std::string> names;
    for (const auto& t : h.tensors) names.push_back(t.name);
    BOOST_TEST(std::is_sorted(names.begin(), names.end()));
    BOOST_TEST(h.metadata.entries().back().first == "general.file_type");
    const std::vector<std::pair<std::vector<Tensor>, float>> adapters = {{files.first, 8.0f / 4.0f},
                                                                         {files.second, 0.5f}};
    for (const char* name : {"blk.0.attn_q.weight", "blk.0.ffn_down.weight", "token_embd.weight"}) {
        const Tensor& base = named(files.base, name);
        const Float64Merge want = float64_merge(base, adapters);
        const std::vector<float> got = read_values(files / "merged.gguf", name);
        const bool f32 = base.type == id(GgmlType::f32);
        BOOST_TEST_REQUIRE(got.size() == want.values.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            // F32: a few ulps of the operands' size (the order of the sums); F16: the float64
            // merge rounded, or the F16 value next to it.
            const double exact = want.values[i];
            const float rounded = ck::kernels::f16_to_f32(ck::kernels::f32_to_f16(float(exact)));
            const double error = f32 ? std::fabs(double(got[i]) - exact)
                                     : std::fabs(double(got[i]) - double(rounded));
            const double bound = f32 ? 3 * want.magnitudes[i] * 0x1p-23
                                     : std::fabs(double(rounded)) * 0x1p-10 + 0x1p-24;
            BOOST_TEST(error <= bound, name << "[" << i << "]: " << got[i] << " vs " << exact);
        }
    }
    // Tensors no adapter changes are the base's bytes.
    BOOST_TEST(read_values(files / "merged.gguf", "output.weight") ==
               named(files.base, "output.weight").values);
}

// The same merge as a pipeline stage keeps the base's float types (F16 stays F16) and order.
BOOST_AUTO_TEST_CASE(lora_stage_keeps_the_base_layout) {
    MergeFiles files;
    const auto r = cktest::run_ckhost({"--pipeline",
                                       "gguf:lora[adapter={" + (files / "a.gguf").string() + "," +
                                           (files / "b.gguf").string() + "},scale={1,0.5}]:gguf",
                                       "-i", (files / "base.gguf").string(), "-o",
                                       (files / "stage.gguf").string()});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const ck::ModelHeader h = read_header(files / "stage.gguf");
    BOOST_TEST_REQUIRE(h.tensors.size() == files.base.size());
    for (std::size_t i = 0; i < h.tensors.size(); ++i) {
        BOOST_TEST(h.tensors[i].name == files.base[i].name);
        BOOST_TEST(h.tensors[i].type == files.base[i].type);
    }
    // Value for value what export-lora writes (both F16 here).
    BOOST_TEST_REQUIRE(
        export_lora(files, {"--lora", "a.gguf", "--lora-scaled", "b.gguf:0.5"}).exit_code == 0);
    BOOST_TEST(read_values(files / "stage.gguf", "blk.0.attn_q.weight") ==
               read_values(files / "merged.gguf", "blk.0.attn_q.weight"));
}

// --update: an adapter is an input of the recipe (side_inputs) as much as the model is; the same
// adapter path with other contents makes the conversion run again, naming the file.
BOOST_AUTO_TEST_CASE(update_converts_again_when_an_adapter_changes) {
    MergeFiles files;
    const auto run = [&files] {
        return cktest::run_ckhost({"--update", "--pipeline",
                                   "gguf:lora[adapter=" + (files / "a.gguf").string() + "]:gguf",
                                   "-i", (files / "base.gguf").string(), "-o",
                                   (files / "merged.gguf").string()});
    };
    BOOST_TEST_REQUIRE(run().exit_code == 0);
    auto r = run();
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "up to date"), r.err);
    const auto before = cktest::read_file(files / "merged.gguf");
    std::vector<Tensor> other = files.first;
    for (Tensor& t : other)  // B negated (negating both factors would keep B A)
        if (t.name.ends_with(".lora_b"))
            for (float& v : t.values) v = -v;
    write_gguf(files / "a.gguf", adapter_metadata(8.0f), other);
    r = run();
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(contains(r.err, "a.gguf', which a stage reads, changed"), r.err);
    BOOST_TEST(cktest::read_file(files / "merged.gguf") != before);
}

// Each refusal: exit 1, the message naming the problem, and no output file.
BOOST_AUTO_TEST_CASE(refusals_before_anything_is_written) {
    MergeFiles files;
    struct Case {
        const char* what;
        std::vector<Tensor> tensors;
        ck::Metadata metadata;
        std::vector<const char*> message;
    };
    std::vector<Tensor> wrong_rank = files.first;
    wrong_rank[1] =
        random_tensor("blk.0.attn_q.weight.lora_b", id(GgmlType::f32), {5, 8}, 9, 0.02f);
    std::vector<Tensor> lacking = files.first;
    lacking.push_back(
        random_tensor("blk.1.attn_q.weight.lora_a", id(GgmlType::f32), {32, 4}, 9, 0.02f));
    lacking.push_back(
        random_tensor("blk.1.attn_q.weight.lora_b", id(GgmlType::f32), {4, 8}, 9, 0.02f));
    std::vector<Tensor> quantized = files.first;
    quantized[0] = {
        "blk.0.attn_q.weight.lora_a", id(GgmlType::q8_0), {32, 4}, std::vector<float>(128)};
    std::vector<Tensor> unpaired = files.first;
    unpaired.erase(unpaired.begin() + 1);
    const std::vector<Case> cases = {
        {"architecture",
         files.first,
         adapter_metadata(8, "qwen3"),
         {"general.architecture", "'qwen3', not 'llama'"}},
        {"rank", wrong_rank, adapter_metadata(8), {"blk.0.attn_q.weight.lora_a", "rank or shape"}},
        {"missing base tensor",
         lacking,
         adapter_metadata(8),
         {"blk.1.attn_q.weight.lora_a", "base model does not have"}},
        {"quantized", quantized, adapter_metadata(8), {"q8_0", "quantized LoRA"}},
        {"unpaired", unpaired, adapter_metadata(8), {"blk.0.attn_q.weight.lora_a", "no lora_b"}},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.what) {
            write_gguf(files / "bad.gguf", c.metadata, c.tensors);
            const auto r = export_lora(files, {"--lora", "bad.gguf"}, "out.gguf");
            BOOST_TEST(r.exit_code == 1, r.err);
            for (const char* part : c.message) BOOST_TEST(contains(r.err, part), r.err);
            BOOST_TEST(!fs::exists(files / "out.gguf"));
            fs::remove(files / "bad.gguf");
        }
    }
    // Two adapters must change the same tensors (llama-export-lora refuses too, after writing).
    std::vector<Tensor> fewer = files.second;
    fewer.resize(4);
    write_gguf(files / "fewer.gguf", adapter_metadata(16), fewer);
    const auto r = export_lora(
        files, {"--lora", (files / "a.gguf").string() + "," + (files / "fewer.gguf").string()},
        "out.gguf");
    BOOST_TEST(r.exit_code == 1);
    BOOST_TEST(contains(r.err, "token_embd.weight.lora_a"), r.err);
    BOOST_TEST(!fs::exists(files / "out.gguf"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace unity_test_lora_merge
