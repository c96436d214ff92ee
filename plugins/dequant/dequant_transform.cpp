// The dequant transform `dequant[to=f32|f16|bf16,only=GLOB,skip=GLOB]` turns the
// selected tensors into a float type, tensor by tensor, with the kernel table this CPU runs
// best (chosen once, when the plugin is loaded).
#include "dequant_transform.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ck/error.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/llama/tensors.hpp"
#include "ck/parallel.hpp"
#include "ck/stage.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"
#include "ck/tensor_filter.hpp"

namespace ckplugin::dequant {
namespace {

using ck::GgmlType;

constexpr std::uint32_t id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

// Elements converted per pool item. An f32 target is written straight into the output: items of
// 4 MiB keep the kernels' streaming stores (used from 1M elements on). Each item gives its input
// pages back in one madvise, whose TLB shootdown costs the same for 128 KiB as for 2 MiB: items
// of 64Ki values made a BF16 -> F16 conversion spend 40% of its system time there.
constexpr std::size_t chunk_elements = 1 << 20;
// `elements` rounded down to whole blocks of `type`, at least one block.
std::size_t whole_blocks(std::size_t elements, const ck::TypeInfo& type) {
    return std::max<std::size_t>(elements / type.block_size, 1) * type.block_size;
}

// Maps the pages of [begin, end) writable in one call (MADV_POPULATE_WRITE, Linux 5.14 on), where
// the kernels' first stores would fault them in one 4 KiB page at a time: on the development
// machine (a virtual machine) that took a fifth off the system time of a BF16 -> F16
// conversion. An older kernel refuses the advice, and the pages fault in as before.
void populate_for_writing(std::byte* begin, std::byte* end) {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto first = reinterpret_cast<std::uintptr_t>(begin) / page * page;
    const auto last = reinterpret_cast<std::uintptr_t>(end);
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#else
    (void)begin;
    (void)end;
#endif
}

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
    std::size_t kept_f32[3] = {};  // by ck::llama::ConverterF32
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        ck::TensorInfo& t = out.tensors[i];
        if (!filter_.selects(t.name)) continue;
        // What `only` names is converted, whatever it is.
        using ck::llama::ConverterF32;
        const ConverterF32 kept = target_ != id(GgmlType::f32) && !filter_.chosen_by_only(t.name)
                                      ? ck::llama::converter_keeps_f32(t.name, t.ne.size())
                                      : ConverterF32::no;
        const std::uint32_t target = kept != ConverterF32::no ? id(GgmlType::f32) : target_;
        ++kept_f32[static_cast<int>(kept)];
        if (t.type == target) continue;
        const ck::TypeInfo* info = ck::find_type(t.type);
        // Integer and f64 tensors are not weights to dequantize: they pass through.
        if (info && !info->removed && !info->quantized && !info->dequantizable) continue;
        if (!info || info->removed || !ck::kernels::plugin_dequant_table().fn[t.type])
            throw ck::tensor_error(
                "cannot dequantize type " + std::string(ck::type_name(t.type)) +
                    (info && !info->removed ? " (ggml has no dequantizer for it)" : ""),
                t.name, in.source);
        conversions_[i] =
            Conversion{t.type, target, t.elements(), static_cast<std::uint64_t>(t.ne[0]), t.name};
        t.type = target;
        t.nbytes = *ck::tensor_bytes(target, t.ne);
    }
    const std::string why =
        " stay in f32, as llama.cpp's converters store them; name them with only= to convert "
        "them too";
    if (const auto n = kept_f32[static_cast<int>(ck::llama::ConverterF32::one_dimensional)])
        context_.note("dequant: " + std::to_string(n) + " 1-D tensor(s) (norms, biases)" + why);
    if (const auto n = kept_f32[static_cast<int>(ck::llama::ConverterF32::by_name)])
        context_.note("dequant: " + std::to_string(n) + " expert router(s) and norm(s)" + why);
    return out;
}

ck::TensorView Dequant::apply(std::size_t index, const ck::Upstream& upstream) {
    ck::TensorView in = upstream(index);
    const auto& conversion = conversions_.at(index);
    if (!conversion) return in;
    return convert(*conversion, in, conversion->elements);
}

ck::TensorView Dequant::apply_rows(std::size_t index, ck::RowRange rows,
                                   const ck::UpstreamRows& upstream) {
    ck::TensorView in = upstream(index, rows);
    const auto& conversion = conversions_.at(index);
    if (!conversion) return in;
    return convert(*conversion, in, rows.count * conversion->row_length);
}

ck::TensorView Dequant::convert(const Conversion& c, const ck::TensorView& in,
                                std::uint64_t elements) const {
    const ck::TypeInfo& from = *ck::find_type(c.from);
    ck::kernels::DequantFn dequant = ck::kernels::plugin_dequant_table().fn[c.from];
    const std::uint64_t expected = *ck::row_bytes(c.from, elements);
    ck::support::check_tensor_bytes(in, expected, c.name, from.name);
    const bool to_f32 = c.to == id(GgmlType::f32);
    const std::size_t out_size = to_f32 ? 4 : 2;
    // 64-byte aligned: large f32 outputs then take the kernels' streaming-store path.
    ck::TensorAllocation buffer = ck::TensorView::allocate(elements * out_size);
    std::byte* out = buffer.bytes.data();
    ck::TensorView view = std::move(buffer.view);
    const std::byte* src = in.bytes().data();
    const ck::kernels::NarrowTable& narrow = ck::kernels::plugin_narrow_table();
    const ck::kernels::NarrowFn narrow_fn =
        c.to == id(GgmlType::f16) ? narrow.to_f16 : narrow.to_bf16;
    // Whole blocks per pool item (the split depends on the type only).
    const std::size_t step = whole_blocks(chunk_elements, from);
    ck::parallel_chunks(elements, step, [&](std::size_t first, std::size_t end) {
        const std::size_t first_byte = first / from.block_size * from.block_bytes;
        const std::size_t n = end - first;
        populate_for_writing(out + first * out_size, out + end * out_size);
        if (to_f32) {
            dequant(src + first_byte, reinterpret_cast<float*>(out) + first, n);
            ck::le::in_place(reinterpret_cast<float*>(out) + first, n);  // the tensor's order
        } else
            ck::kernels::dequantize_and_narrow(dequant, narrow_fn, from, src + first_byte,
                                               reinterpret_cast<std::uint16_t*>(out) + first, n);
        // Blocks read are not read again: their input pages leave the resident set.
        in.release(first_byte, first_byte + n / from.block_size * from.block_bytes);
    });
    return view;
}

}  // namespace ckplugin::dequant
