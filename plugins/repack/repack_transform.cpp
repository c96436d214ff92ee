#include "repack_transform.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <utility>

#include "ck/conventions/repacked.hpp"
#include "ck/error.hpp"
#include "ck/parallel.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"

namespace ckplugin::repack {
using namespace ck;
namespace {

using kernels::RepackTarget;

// Elements per kernel call and pool item: a multiple of the kernels' 1024-element slices, small
// enough that a 2048 x 2048 tensor spreads over 16 threads and Ctrl-C is noticed within
// milliseconds. The accuracy figures add up per piece, so they depend on this constant (not on
// the thread count); changing it may move their last digits.
constexpr std::uint64_t piece_elements = std::uint64_t(1) << 18;

std::string_view format_of(RepackTarget target) {
    return target == RepackTarget::int8 ? ck::repack::int8_format : ck::repack::nf4_format;
}

// The source types with a path to `target`, quantized ones first, for messages.
std::string sources_of(const kernels::RepackTable& table, RepackTarget target) {
    std::string quantized, plain;
    for (std::uint32_t type = 0; type < ggml_type_count; ++type)
        if (table.find(type, target)) {
            std::string name(type_name(type));
            std::transform(name.begin(), name.end(), name.begin(), ::toupper);
            std::string& list = find_type(type)->quantized ? quantized : plain;
            list += (list.empty() ? "" : ", ") + name;
        }
    return quantized + ", " + plain;
}

}  // namespace

RepackTransform::RepackTransform(const Options& options, Context& context)
    : target_(options.get("to", "int8") == "nf4" ? RepackTarget::nf4 : RepackTarget::int8),
      filter_(options),
      kernels_(kernels::plugin_repack_table()),
      report_(context, target_ == RepackTarget::int8 ? "int8" : "nf4",
              std::string(isa_name(kernels_.isa))) {}

std::optional<SkipReason> RepackTransform::reason_to_skip(const TensorInfo& t,
                                                          const ModelHeader& in) const {
    using Kind = SkipReason::Kind;
    const std::string target = target_ == RepackTarget::int8 ? "int8" : "nf4";
    if (!filter_.selects(t.name))
        return SkipReason{Kind::not_selected, "not selected by only/skip"};
    // The codes and scales of an earlier repack (a repacked safetensors file read back).
    if (in.metadata.contains(ck::repack::metadata_key(t.name)))
        return SkipReason{Kind::already_repacked, "already repacked"};
    for (std::string_view suffix : {".minmax", ".absmax"})
        if (t.name.size() > suffix.size() && t.name.ends_with(suffix) &&
            in.metadata.contains(
                ck::repack::metadata_key(t.name.substr(0, t.name.size() - suffix.size()))))
            return SkipReason{Kind::already_repacked, "scales of a repacked tensor"};
    if (t.ne.size() != 2)
        return SkipReason{Kind::not_2d,
                          std::to_string(t.ne.size()) + "-D, only 2-D weights repack"};
    if (!kernels_.find(t.type, target_))
        return SkipReason{Kind::no_path, "no " + std::string(type_name(t.type)) + " -> " + target +
                                             " path (" + target + " repacks " +
                                             sources_of(kernels_, target_) + ")"};
    const std::uint64_t elements = t.elements();
    if (!ck::repack::pair_shapes(format_of(target_), static_cast<std::uint64_t>(t.ne[0]), elements))
        return SkipReason{Kind::block_rule,
                          target_ == RepackTarget::int8
                              ? "int8 needs a multiple of 128 elements"
                              : "nf4 needs a multiple of 64 elements and an even row length"};
    const std::string scales_name =
        t.name + std::string(ck::repack::scales_suffix(format_of(target_)));
    if (in.find_tensor(scales_name))
        return SkipReason{Kind::name_taken, "a tensor named '" + scales_name + "' exists already"};
    return std::nullopt;
}

ModelHeader RepackTransform::plan(const ModelHeader& in) {
    filter_.check_matches(in, "repack");
    source_file_ = in.source;
    ModelHeader out = in;
    out.tensors.clear();
    outputs_.clear();
    jobs_.clear();
    const std::string_view format = format_of(target_);
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        const TensorInfo& t = in.tensors[i];
        if (auto skip = reason_to_skip(t, in)) {
            report_.skipped(t.name, t.type, std::move(*skip));
            outputs_.push_back({i, Role::pass, 0});
            out.tensors.push_back(t);
            continue;
        }
        const std::uint64_t elements = t.elements();
        const auto shapes =
            *ck::repack::pair_shapes(format, static_cast<std::uint64_t>(t.ne[0]), elements);
        TensorInfo codes = t, scales = t;
        codes.type = ck::repack::codes_type;
        codes.ne = shapes.codes;
        codes.nbytes = kernels::code_bytes(target_, elements);
        scales.name = t.name + std::string(ck::repack::scales_suffix(format));
        scales.type = ck::repack::scales_type;
        scales.ne = shapes.scales;
        scales.nbytes = kernels::scale_count(target_, elements) * 2;
        jobs_.push_back({t.name, t.type, elements, t.nbytes, kernels_.find(t.type, target_)});
        report_.planned(t.name, std::string(type_name(t.type)), elements, t.nbytes,
                        codes.nbytes + scales.nbytes);
        outputs_.push_back({i, Role::codes, jobs_.size() - 1});
        outputs_.push_back({i, Role::scales, jobs_.size() - 1});
        out.tensors.push_back(std::move(codes));
        out.tensors.push_back(std::move(scales));
        out.metadata.set(ck::repack::metadata_key(t.name), Value::of_string(std::string(format)));
    }
    // Names must stay unique: a scales name may collide with a tensor that comes later.
    std::unordered_set<std::string_view> names;
    for (const TensorInfo& t : out.tensors)
        if (!names.insert(t.name).second)
            throw tensor_error("repacking would give two tensors this name", t.name, in.source);
    report_.finish_plan();
    return out;
}

RepackTransform::Result RepackTransform::repack(std::size_t job_index, const TensorView& source) {
    Job& job = jobs_.at(job_index);
    support::check_tensor_bytes(source, job.source_bytes, job.name, type_name(job.from),
                                source_file_);
    const TypeInfo& from = *find_type(job.from);
    // Buffers of the system's own pages, given back the moment the writer is done (freed heap
    // memory would stay in the process and add up across tensors).
    TensorAllocation codes = TensorView::allocate(kernels::code_bytes(target_, job.elements));
    TensorAllocation scales_buffer =
        TensorView::allocate(kernels::scale_count(target_, job.elements) * 2);
    auto* scales = reinterpret_cast<std::uint16_t*>(scales_buffer.bytes.data());  // aligned
    // Pieces of fixed size go to the pool; each keeps its own error sums, added up in piece
    // order afterwards, so every figure of the report is the same for any thread count.
    const std::size_t pieces =
        static_cast<std::size_t>((job.elements + piece_elements - 1) / piece_elements);
    std::vector<kernels::RepackError> errors(pieces);
    ck::parallel_for(pieces, [&](std::size_t p) {
        const std::uint64_t done = p * piece_elements;
        const auto count = static_cast<std::size_t>(std::min(piece_elements, job.elements - done));
        const std::size_t first = done / from.block_size * from.block_bytes;
        const std::byte* piece = source.bytes().data() + first;
        job.kernel(piece, count,
                   reinterpret_cast<std::uint8_t*>(codes.bytes.data()) +
                       kernels::code_bytes(target_, done),
                   scales + kernels::scale_count(target_, done), errors[p]);
        // Give the consumed source pages back as we go (only a reader's file mapping is
        // touched, and a page a neighbouring piece still reads is simply read again from the
        // page cache): the source and the whole output are never resident together.
        source.release(first, first + count / from.block_size * from.block_bytes);
        // The kernels give the scales as host-order halves; the tensor holds them little-endian.
        ck::le::in_place(scales + kernels::scale_count(target_, done),
                         kernels::scale_count(target_, count));
        throw_if_interrupted();
    });
    kernels::RepackError error;
    for (const kernels::RepackError& e : errors) error.add(e);
    std::lock_guard lock(report_mutex_);
    if (!job.measured) {
        job.measured = true;
        report_.done(job_index, error);
    }
    return {std::move(codes.view), std::move(scales_buffer.view)};
}

TensorView RepackTransform::apply(std::size_t index, const Upstream& upstream) {
    const Output& out = outputs_.at(index);
    if (out.role == Role::pass) return upstream(out.source);
    // Asked for one half alone (the host asks for both through apply_group): the other half
    // is computed too and dropped.
    Result r = repack(out.job, upstream(out.source));
    return out.role == Role::scales ? r.scales : r.codes;
}

std::vector<TensorGroup> RepackTransform::groups() const {
    std::vector<TensorGroup> groups;
    for (std::size_t i = 0; i < outputs_.size(); ++i)
        if (outputs_[i].role == Role::codes) groups.push_back({i, i + 1});  // scales follow
    return groups;
}

std::vector<TensorView> RepackTransform::apply_group(const TensorGroup& members,
                                                     const Upstream& upstream) {
    const Output& first = outputs_.at(members.at(0));
    if (members.size() != 2 || first.role != Role::codes ||
        outputs_.at(members[1]).job != first.job || outputs_[members[1]].role != Role::scales)
        return Transform::apply_group(members, upstream);
    Result r = repack(first.job, upstream(first.source));
    return {std::move(r.codes), std::move(r.scales)};
}

}  // namespace ckplugin::repack
