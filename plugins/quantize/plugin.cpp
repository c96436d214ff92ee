// The quantize plugin: transform `quantize[to=q8_0|q4_0,only=GLOB,skip=GLOB]` quantizes 2-D
// float tensors (F32, F16, BF16) row by row with ggml's reference quantizers, so an F16 model
// becomes exactly what llama.cpp's "pure" quantization writes. Quantized sources need a
// `dequant` stage first; 1-D tensors (norms, biases) stay as they are.
#include <algorithm>
#include <optional>
#include <vector>

#include "ck/error.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/parallel.hpp"
#include "ck/plugin.hpp"
#include "ck/stage.hpp"
#include "ck/tensor_filter.hpp"

namespace {

using ck::GgmlType;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

// llama.cpp's llama_ftype values for the "mostly" types we produce.
constexpr std::uint32_t file_type_q8_0 = 7;
constexpr std::uint32_t file_type_q4_0 = 2;

// Elements per pool item: large enough that scheduling costs nothing, small enough that a
// tensor of a few MB still spreads over every thread.
constexpr std::uint64_t elements_per_item = 1 << 16;

struct Job {
    std::uint32_t from;
    std::uint64_t row_length;
    std::uint64_t rows;
};

class Quantize final : public ck::Transform {
  public:
    Quantize(const ck::Options& options, ck::Context& context)
        : filter_(options), context_(context) {
        target_ = options.get("to", "q8_0") == "q4_0" ? id(GgmlType::q4_0) : id(GgmlType::q8_0);
    }

    ck::ModelHeader plan(const ck::ModelHeader& in) override {
        ck::ModelHeader out = in;
        jobs_.assign(in.tensors.size(), std::nullopt);
        for (std::size_t i = 0; i < in.tensors.size(); ++i) {
            ck::TensorInfo& t = out.tensors[i];
            if (!filter_.selects(t.name) || t.ne.size() < 2 || t.type == target_) continue;
            const std::string subject = "tensor '" + t.name + "'";
            if (t.type != id(GgmlType::f32) && t.type != id(GgmlType::f16) &&
                t.type != id(GgmlType::bf16)) {
                const ck::TypeInfo* info = ck::find_type(t.type);
                if (info && !info->quantized) continue;  // integer tensors are not weights
                throw ck::Error("cannot quantize from " + std::string(ck::type_name(t.type)) +
                                    ": add a dequant[to=f32] stage before quantize",
                                in.source, {}, subject);
            }
            const auto row_length = static_cast<std::uint64_t>(t.ne[0]);
            if (row_length % 32 != 0) {
                context_.warn(subject + ": rows of " + std::to_string(row_length) +
                              " elements are not a multiple of 32; left as " +
                              std::string(ck::type_name(t.type)));
                continue;
            }
            jobs_[i] = Job{t.type, row_length, t.elements() / row_length};
            t.type = target_;
            t.nbytes = *ck::tensor_bytes(target_, t.ne);
            quantized_any_ = true;
        }
        if (quantized_any_) {
            out.metadata.set("general.quantization_version", ck::Value::of_u32(2));
            out.metadata.set(
                "general.file_type",
                ck::Value::of_u32(target_ == id(GgmlType::q4_0) ? file_type_q4_0 : file_type_q8_0));
        }
        return out;
    }

    ck::TensorView apply(std::size_t index, const ck::Upstream& upstream) override {
        ck::TensorView in = upstream(index);
        const auto& job = jobs_.at(index);
        if (!job) return in;
        // Every variant is bit-exact, so the fastest widening gives ggml's bytes too.
        const auto widen = ck::kernels::plugin_dequant_table().fn[job->from];
        const std::uint64_t in_row = *ck::row_bytes(job->from, job->row_length);
        const std::uint64_t out_row = *ck::row_bytes(target_, job->row_length);
        if (in.bytes().size() != in_row * job->rows)
            throw ck::Error("tensor byte size does not match its shape");
        std::vector<std::byte> out(out_row * job->rows);
        // Rows are independent: groups of rows (fixed by the shape, not the thread count) go
        // to the pool, each widening one row at a time (no whole-tensor f32 copy).
        const std::uint64_t rows_per_item =
            std::max<std::uint64_t>(1, elements_per_item / job->row_length);
        const bool to_q4 = target_ == id(GgmlType::q4_0);
        const std::byte* src = in.bytes().data();
        ck::parallel_chunks(job->rows, rows_per_item, [&](std::size_t first, std::size_t end) {
            std::vector<float> row(job->row_length);
            for (std::size_t r = first; r < end; ++r) {
                widen(src + r * in_row, row.data(), row.size());
                if (to_q4)
                    ck::kernels::quantize_row_q4_0(row.data(), out.data() + r * out_row,
                                                   row.size());
                else
                    ck::kernels::quantize_row_q8_0(row.data(), out.data() + r * out_row,
                                                   row.size());
            }
            // The rows read are not read again: their input pages leave the resident set (a
            // page shared with a neighbouring group is simply read again from the page cache),
            // so the input and the output of a large tensor are never resident together.
            in.release(first * in_row, end * in_row);
        });
        return ck::TensorView::owning(std::move(out));
    }

  private:
    ck::TensorFilter filter_;
    ck::Context& context_;
    std::uint32_t target_;
    std::vector<std::optional<Job>> jobs_;
    bool quantized_any_ = false;
};

const ck_option_descriptor options[] = {
    {"to", CK_STAGE_TRANSFORM, "q8_0", "q8_0|q4_0", "target block type"},
    ck::TensorFilter::only_option(CK_STAGE_TRANSFORM),
    ck::TensorFilter::skip_option(CK_STAGE_TRANSFORM),
};

const ck_plugin_descriptor descriptor = ck::describe_plugin(
    {"quantize", "1.0.0",
     "quantize float tensors to q8_0 or q4_0 (bit-identical to ggml's reference quantizers)"},
    options,
    {.create_transform = ck::transform_factory<Quantize>,
     .kernel_variant = ck::kernels::plugin_dequant_variant,
     .flags = CK_PLUGIN_FLAG_CONCURRENT});

}  // namespace

CK_PLUGIN_EXPORT const ck_plugin_descriptor* ckhost_plugin_descriptor() {
    ck::kernels::plugin_dequant_table();  // choose the widening kernels when loaded
    return &descriptor;
}
