// The dequant transform `dequant[to=f32|f16|bf16,only=GLOB,skip=GLOB]` turns the
// selected tensors into a float type, tensor by tensor, with the kernel table this CPU runs
// best (chosen once, when the plugin is loaded).
#include "dequant_transform.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "ck/error.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/float_convert.hpp"
#include "ck/parallel.hpp"
#include "ck/stage.hpp"
#include "ck/support/tensor_io.hpp"
#include "ck/tensor_filter.hpp"

namespace ckplugin::dequant {
namespace {

using ck::GgmlType;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

// Elements converted per pool item: a 16-bit target never stages a whole tensor as f32, and a
// tensor of a few MB still spreads over every thread.
constexpr std::size_t chunk_elements = 1 << 16;
// An f32 target is written straight into the output: items of 4 MiB keep the kernels'
// streaming stores (used from 1M elements on).
constexpr std::size_t f32_chunk_elements = 1 << 20;

}  // namespace

Dequant::Dequant(const ck::Options& options, ck::Context& context)
    : filter_(options), context_(context) {
    const std::string to = options.get("to", "f32");
    target_ = to == "f16"    ? id(GgmlType::f16)
              : to == "bf16" ? id(GgmlType::bf16)
                             : id(GgmlType::f32);
}

ck::ModelHeader Dequant::plan(const ck::ModelHeader& in) {
    filter_.check_matches(in, "dequant");
    ck::ModelHeader out = in;
    conversions_.assign(in.tensors.size(), std::nullopt);
    std::vector<std::string> kept_f32;
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        ck::TensorInfo& t = out.tensors[i];
        if (!filter_.selects(t.name)) continue;
        // llama.cpp's converters store 1-D tensors (norms, biases) in F32 whatever the
        // output type: they are tiny, and F16 would round the norms every layer multiplies
        // by. So do we, unless `only` names the tensor.
        const std::uint32_t target =
            target_ != id(GgmlType::f32) && t.ne.size() == 1 && !filter_.chosen_by_only(t.name)
                ? id(GgmlType::f32)
                : target_;
        if (target != target_) kept_f32.push_back(t.name);
        if (t.type == target) continue;
        const ck::TypeInfo* info = ck::find_type(t.type);
        // Integer and f64 tensors are not weights to dequantize: they pass through.
        if (info && !info->removed && !info->quantized && !info->dequantizable) continue;
        if (!info || info->removed || !ck::kernels::plugin_dequant_table().fn[t.type])
            throw ck::tensor_error(
                "cannot dequantize type " + std::string(ck::type_name(t.type)) +
                    (info && !info->removed ? " (ggml has no dequantizer for it)" : ""),
                t.name, in.source);
        conversions_[i] = Conversion{t.type, target, t.elements(), t.name};
        t.type = target;
        t.nbytes = *ck::tensor_bytes(target, t.ne);
    }
    if (!kept_f32.empty())
        context_.note("dequant: " + std::to_string(kept_f32.size()) +
                      " 1-D tensor(s) (norms, biases) stay in f32, as llama.cpp's converters "
                      "store them; name them with only= to convert them too");
    return out;
}

ck::TensorView Dequant::apply(std::size_t index, const ck::Upstream& upstream) {
    ck::TensorView in = upstream(index);
    const auto& conversion = conversions_.at(index);
    if (!conversion) return in;
    return convert(*conversion, in);
}

ck::TensorView Dequant::convert(const Conversion& c, const ck::TensorView& in) const {
    const ck::TypeInfo& from = *ck::find_type(c.from);
    ck::kernels::DequantFn dequant = ck::kernels::plugin_dequant_table().fn[c.from];
    const std::uint64_t expected = *ck::row_bytes(c.from, c.elements);
    ck::support::check_tensor_bytes(in, expected, c.name, from.name);
    // 64-byte aligned: large f32 outputs then take the kernels' streaming-store path.
    ck::TensorAllocation buffer =
        ck::TensorView::allocate(c.elements * (c.to == id(GgmlType::f32) ? 4 : 2));
    std::byte* out = buffer.bytes.data();
    ck::TensorView view = std::move(buffer.view);
    const std::byte* src = in.bytes().data();
    // Whole blocks per pool item (the split depends on the type only), each converted
    // through a small f32 buffer when the target is 16-bit.
    const std::size_t per_item = c.to == id(GgmlType::f32) ? f32_chunk_elements : chunk_elements;
    const std::size_t step = std::max<std::size_t>(per_item / from.block_size, 1) * from.block_size;
    auto* dst16 = reinterpret_cast<std::uint16_t*>(out);
    auto* dst32 = reinterpret_cast<float*>(out);
    const bool to_f32 = c.to == id(GgmlType::f32);
    const bool to_f16 = c.to == id(GgmlType::f16);
    ck::parallel_chunks(c.elements, step, [&](std::size_t first, std::size_t end) {
        const std::size_t first_byte = first / from.block_size * from.block_bytes;
        const std::size_t n = end - first;
        if (to_f32) {
            dequant(src + first_byte, dst32 + first, n);
        } else {
            std::vector<float> scratch(n);
            dequant(src + first_byte, scratch.data(), n);
            for (std::size_t j = 0; j < n; ++j)
                dst16[first + j] = to_f16 ? ck::kernels::f32_to_f16(scratch[j])
                                          : ck::kernels::f32_to_bf16(scratch[j]);
        }
        // Blocks read are not read again: their input pages leave the resident set.
        in.release(first_byte, first_byte + n / from.block_size * from.block_bytes);
    });
    return view;
}

}  // namespace ckplugin::dequant
