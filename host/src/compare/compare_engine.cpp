#include "compare/compare_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>

#include "ck/context.hpp"
#include "ck/enum_names.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/mapped_file.hpp"
#include "ck/parallel.hpp"
#include "ck/plugin.hpp"
#include "ck/support/little_endian.hpp"
#include "importance_matrix.hpp"
#include "pipeline/plugin_call.hpp"

namespace ckhost::compare {
namespace {

// Shapes as ggml compares them: trailing dimensions of 1 do not count ([4096] is [4096, 1]).
std::vector<std::int64_t> trimmed(std::vector<std::int64_t> ne) {
    while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
    return ne;
}

std::string shape_text(const std::vector<std::int64_t>& ne) {
    std::string text = "[";
    for (std::size_t i = 0; i < ne.size(); ++i) text += (i ? ", " : "") + std::to_string(ne[i]);
    return text + "]";
}

// Values per row (ne[0]); 1 for a scalar, so that a row count is always a divisor.
std::uint64_t row_length(const ck::TensorInfo& t) {
    return t.ne.empty() || t.ne[0] <= 0 ? 1 : static_cast<std::uint64_t>(t.ne[0]);
}

Side side_of(const ck::TensorInfo& t) {
    Side s;
    s.type = t.type;
    s.type_name = t.stored_type.empty() ? std::string(ck::type_name(t.type)) : t.stored_type;
    s.ne = t.ne;
    s.elements = t.elements();
    s.stored_bytes = t.stored_type.empty() ? t.nbytes : t.stored_bytes;
    return s;
}

// The kernels' table, chosen once within --isa: every variant gives the scalar reference's
// values bit for bit, so the figures do not depend on the CPU.
ck::kernels::DequantFn dequantizer(std::uint32_t type) {
    return type < ck::ggml_type_count ? ck::kernels::plugin_dequant_table().fn[type] : nullptr;
}

// A call into the input's reader: from any thread when its plugin is declared concurrent, else
// one at a time (the view it returns is then used without the lock).
template <class Fn>
ck::TensorView call_reader(Input& in, Fn&& fn) {
    if (in.concurrent) return call_plugin(in.opened.plugin, fn);
    const std::lock_guard lock(in.calls);
    return call_plugin(in.opened.plugin, fn);
}

// What a tensor's rows are weighted by: its importance matrix entry, one weight per column of
// each expert's rows (expert e's at e * ne0), as the quantizers take it.
struct Weights {
    const float* entry = nullptr;
    std::uint64_t rows_per_expert = 1;
};

// One pool item: rows of one tensor, or (`whole`) the tensor as a reader without row blocks
// hands it out, gone through block by block inside the item.
struct Job {
    std::size_t result;  // index in PairResult::tensors
    std::size_t index_a;
    std::size_t index_b;
    ck::RowRange rows;
    bool whole;
    Weights weights;
};

struct Partial {
    ErrorSums sums;
    NonFinite non_finite;
};

// One thread's buffers for each side (0: A, 1: B): the bytes read and their F32 values. Reused
// from chunk to chunk, since the first store to a fresh page costs more than the work on it.
struct ThreadBuffers {
    std::vector<std::byte> bytes[2];
    std::vector<float> values[2];
};
ThreadBuffers& thread_buffers() {
    thread_local ThreadBuffers buffers;
    return buffers;
}

// Bytes [begin, end) of one side of a job. A file-backed view's bytes are read from its file
// with pread into this thread's buffer, as `cat` reads: mapping each page into the process and
// dropping it again (TLB shootdowns included) cost more than the copy, and the copy lands in
// the cache the kernels read it from. Other views (a reader's own buffer) are read in place.
const std::byte* side_bytes(const ck::TensorView& view, std::size_t begin, std::size_t end,
                            int side) {
    const std::optional<ck::FileExtent> extent = view.file_extent();
    if (!extent) return view.data() + begin;
    std::vector<std::byte>& buffer = thread_buffers().bytes[side];
    if (buffer.size() < end - begin) buffer.resize(end - begin);
    const int fd = extent->file->descriptor();
    for (std::size_t done = 0; done < end - begin;) {
        const ssize_t n = ::pread(fd, buffer.data() + done, end - begin - done,
                                  static_cast<off_t>(extent->offset + begin + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            throw ck::Error("cannot read the file: " + std::string(std::strerror(errno)),
                            extent->file->path());
        if (n == 0) throw ck::input_changed_error(extent->file->path());  // it shrank
        done += static_cast<std::size_t>(n);
    }
    return buffer.data();
}

// `n` values of `type` from `bytes` as F32: the bytes themselves when they are aligned F32,
// else dequantized into this thread's buffer for `side`.
const float* as_f32(const std::byte* bytes, std::uint32_t type, std::size_t n, int side) {
    if (ck::le::host_is_little && type == static_cast<std::uint32_t>(ck::GgmlType::f32) &&
        reinterpret_cast<std::uintptr_t>(bytes) % alignof(float) == 0)
        return reinterpret_cast<const float*>(bytes);
    std::vector<float>& buffer = thread_buffers().values[side];
    if (buffer.size() < n) buffer.resize(n);
    dequantizer(type)(bytes, buffer.data(), n);
    return buffer.data();
}

// Values per chunk of a job: dequantized and added while both sides' values are in the cache
// (the kernels also take their cached path, below a MiB of output).
constexpr std::uint64_t chunk_elements = std::uint64_t{1} << 16;

class PairWork {
  public:
    PairWork(Input& a, Input& b, const EngineSettings& settings)
        : a_(a), b_(b), settings_(settings) {}

    PairResult run();

  private:
    void match();
    TensorResult matched_pair(std::size_t ia, std::size_t ib);
    Weights weigh(TensorResult& r) const;
    void plan_jobs(std::size_t result, std::size_t ia, std::size_t ib, Weights weights);
    Partial run_job(const Job& job) const;
    void compare_block(const std::byte* a, const std::byte* b, const Job& job, ck::RowRange rows,
                       Partial& out) const;
    ck::TensorView fetch(Input& in, std::size_t index, ck::RowRange rows, bool whole) const;

    Input& a_;
    Input& b_;
    const EngineSettings& settings_;
    PairResult result_;
    std::vector<Job> jobs_;
};

PairResult PairWork::run() {
    result_.file = b_.path.string();
    result_.format = b_.opened.plugin;
    match();
    std::vector<Partial> partials(jobs_.size());
    ck::parallel_for(jobs_.size(), [&](std::size_t j) { partials[j] = run_job(jobs_[j]); });
    // Each tensor's blocks in row order: the sums depend on the data alone.
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
        TensorResult& r = result_.tensors[jobs_[j].result];
        r.sums.add(partials[j].sums);
        r.non_finite.add(partials[j].non_finite);
    }
    for (TensorResult& r : result_.tensors)
        if (r.status == Status::compared && r.non_finite.any()) {
            r.status = Status::non_finite;
            r.sums = ErrorSums{};
        }
    return std::move(result_);
}

// A's tensors in A's order, each with B's of the same name; then B's that A lacks.
void PairWork::match() {
    const auto& ta = a_.opened.header.tensors;
    const auto& tb = b_.opened.header.tensors;
    std::map<std::string, std::size_t, std::less<>> in_b;
    for (std::size_t i = 0; i < tb.size(); ++i) in_b.emplace(tb[i].name, i);
    std::vector<bool> matched(tb.size(), false);
    for (std::size_t ia = 0; ia < ta.size(); ++ia) {
        const auto found = in_b.find(ta[ia].name);
        if (found == in_b.end()) {
            TensorResult r;
            r.name = ta[ia].name;
            r.a = side_of(ta[ia]);
            r.status = Status::only_in_a;
            result_.tensors.push_back(std::move(r));
            continue;
        }
        matched[found->second] = true;
        result_.tensors.push_back(matched_pair(ia, found->second));
        TensorResult& r = result_.tensors.back();
        if (r.status == Status::compared)
            plan_jobs(result_.tensors.size() - 1, ia, found->second, weigh(r));
    }
    for (std::size_t ib = 0; ib < tb.size(); ++ib) {
        if (matched[ib]) continue;
        TensorResult r;
        r.name = tb[ib].name;
        r.b = side_of(tb[ib]);
        r.status = Status::only_in_b;
        result_.tensors.push_back(std::move(r));
    }
}

// A tensor both sides have: compared unless the shapes differ or a side holds no floats.
TensorResult PairWork::matched_pair(std::size_t ia, std::size_t ib) {
    const ck::TensorInfo& ta = a_.opened.header.tensors[ia];
    const ck::TensorInfo& tb = b_.opened.header.tensors[ib];
    TensorResult r;
    r.name = ta.name;
    r.a = side_of(ta);
    r.b = side_of(tb);
    if (trimmed(ta.ne) != trimmed(tb.ne)) {
        r.status = Status::shape_mismatch;
        r.note = "A is " + shape_text(ta.ne) + ", B is " + shape_text(tb.ne);
    } else if (!dequantizer(ta.type) || !dequantizer(tb.type)) {
        r.status = Status::not_comparable;
        const std::uint32_t type = dequantizer(ta.type) ? tb.type : ta.type;
        r.note = "type " + std::string(ck::type_name(type)) + " holds no float values to compare";
    }
    return r;
}

// The tensor's importance matrix entry when it has one of its size (ne0 weights per expert);
// an entry of another size is said, and not used.
Weights PairWork::weigh(TensorResult& r) const {
    if (!settings_.imatrix) return {};
    const ckplugin::quantize::ImportanceMatrix::Entry* entry = settings_.imatrix->find(r.name);
    if (!entry) return {};
    const std::vector<std::int64_t>& ne = r.a->ne;
    if (ne.empty()) return {};
    const std::int64_t experts = ne.size() > 2 ? ne[2] : 1;
    const std::int64_t expected = ne[0] * experts;
    if (static_cast<std::int64_t>(entry->size()) != expected) {
        r.note = "importance matrix entry of " + std::to_string(entry->size()) +
                 " weights, the tensor needs " + std::to_string(expected) + ": not weighted";
        return {};
    }
    r.weighted = true;
    return {entry->data(), ne.size() > 1 ? static_cast<std::uint64_t>(ne[1]) : 1};
}

// Blocks of about block_elements values a side, in rows both readers can hand out (a multiple
// of both granules); one whole-tensor item when either reader hands the tensor out only whole.
void PairWork::plan_jobs(std::size_t result, std::size_t ia, std::size_t ib, Weights weights) {
    const ck::TensorInfo& t = a_.opened.header.tensors[ia];
    const std::uint64_t rows = t.rows();
    const std::uint64_t granule =
        ck::combine_granules(a_.opened.reader->row_granule(ia), b_.opened.reader->row_granule(ib));
    if (granule == 0) {
        jobs_.push_back({result, ia, ib, {0, rows}, true, weights});
        return;
    }
    std::uint64_t per_block = std::max<std::uint64_t>(1, settings_.block_elements / row_length(t));
    per_block = std::max(granule, per_block / granule * granule);
    for (std::uint64_t first = 0; first < rows; first += per_block)
        jobs_.push_back(
            {result, ia, ib, {first, std::min(per_block, rows - first)}, false, weights});
}

ck::TensorView PairWork::fetch(Input& in, std::size_t index, ck::RowRange rows, bool whole) const {
    const ck::TensorInfo& t = in.opened.header.tensors[index];
    ck::TensorView v = call_reader(in, [&] {
        return whole ? in.opened.reader->tensor(index) : in.opened.reader->tensor_rows(index, rows);
    });
    const std::uint64_t expected = whole ? t.nbytes : rows.count * t.row_bytes();
    if (v.size() != expected)
        throw ck::tensor_error("the reader '" + in.opened.plugin + "' returned " +
                                   std::to_string(v.size()) + " bytes, expected " +
                                   std::to_string(expected),
                               t.name, in.path.string());
    return v;
}

Partial PairWork::run_job(const Job& job) const {
    ck::throw_if_interrupted();
    Partial out;
    const ck::TensorView va = fetch(a_, job.index_a, job.rows, job.whole);
    const ck::TensorView vb = fetch(b_, job.index_b, job.rows, job.whole);
    const std::uint64_t row_a = a_.opened.header.tensors[job.index_a].row_bytes();
    const std::uint64_t row_b = b_.opened.header.tensors[job.index_b].row_bytes();
    const std::uint64_t values_per_row = row_length(a_.opened.header.tensors[job.index_a]);
    // Whole rows per chunk (a row is whole blocks of either type), from the job's first row.
    const std::uint64_t per_chunk = std::max<std::uint64_t>(1, chunk_elements / values_per_row);
    for (std::uint64_t first = 0; first < job.rows.count; first += per_chunk) {
        const std::uint64_t count = std::min(per_chunk, job.rows.count - first);
        const std::byte* a = side_bytes(va, first * row_a, (first + count) * row_a, 0);
        const std::byte* b = side_bytes(vb, first * row_b, (first + count) * row_b, 1);
        compare_block(a, b, job, {job.rows.first + first, count}, out);
        if ((first / per_chunk) % 64 == 63) ck::throw_if_interrupted();
    }
    return out;
}

void PairWork::compare_block(const std::byte* bytes_a, const std::byte* bytes_b, const Job& job,
                             ck::RowRange rows, Partial& out) const {
    const ck::TensorInfo& ta = a_.opened.header.tensors[job.index_a];
    const std::uint64_t values_per_row = row_length(ta);
    const std::size_t n = rows.count * values_per_row;
    const float* a = as_f32(bytes_a, ta.type, n, 0);
    const float* b = as_f32(bytes_b, b_.opened.header.tensors[job.index_b].type, n, 1);
    ErrorSums block;
    if (!job.weights.entry) {
        accumulate(a, b, n, nullptr, block);
    } else {
        for (std::uint64_t r = 0; r < rows.count; ++r) {
            const std::uint64_t expert = (rows.first + r) / job.weights.rows_per_expert;
            accumulate(a + r * values_per_row, b + r * values_per_row, values_per_row,
                       job.weights.entry + expert * values_per_row, block);
        }
    }
    // A NaN or an infinity makes a sum so (a finite float's square never overflows a double):
    // only then are the values counted.
    if (!std::isfinite(block.sum_a2 + block.sum_b2 + block.sum_d2 + block.sum_ab))
        out.non_finite.add(count_non_finite(a, b, n));
    out.sums.add(block);
}

}  // namespace

double Side::bits_per_weight() const {
    return elements ? static_cast<double>(stored_bytes) * 8.0 / static_cast<double>(elements) : 0;
}

const char* status_name(Status status) {
    // In Status order; the names --json and the text print.
    static constexpr std::array<std::string_view, 6> names = {
        "compared", "non_finite", "only_in_a", "only_in_b", "shape_mismatch", "not_comparable"};
    return ck::enum_name(names, status, "?").data();
}

std::unique_ptr<Input> open_input(PluginRegistry& registry, const std::filesystem::path& path,
                                  ck::Context& context) {
    auto in = std::make_unique<Input>();
    in->path = path;
    in->opened = open_with_any_reader(registry, path, context);
    in->concurrent =
        (registry.get(in->opened.plugin).descriptor->flags & CK_PLUGIN_FLAG_CONCURRENT) != 0;
    return in;
}

PairResult compare_inputs(Input& a, Input& b, const EngineSettings& settings) {
    return PairWork(a, b, settings).run();
}

}  // namespace ckhost::compare
