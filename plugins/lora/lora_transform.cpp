#include "lora_transform.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/narrow.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/option_list.hpp"
#include "ck/support/tensor_io.hpp"

namespace ckplugin::lora {
namespace {

using ck::GgmlType;

constexpr std::uint32_t type_id(GgmlType t) {
    return static_cast<std::uint32_t>(t);
}

// Values merged at a time: 64 Ki floats (256 KiB) stay in the cache from their widening to F32,
// through every adapter's product, to their rounding.
constexpr std::size_t group_values = std::size_t{1} << 16;

bool is_float(std::uint32_t type) {
    return type == type_id(GgmlType::f32) || type == type_id(GgmlType::f16) ||
           type == type_id(GgmlType::bf16);
}

// `count` values of `view` from value `first` on, as F32.
std::vector<float> as_f32(const ck::TensorView& view, std::uint32_t type, std::size_t first,
                          std::size_t count) {
    std::vector<float> values(count);
    const std::size_t width = type == type_id(GgmlType::f32) ? 4 : 2;
    ck::kernels::plugin_dequant_table().fn[type](view.data() + first * width, values.data(), count);
    return values;
}

}  // namespace

Lora::Lora(const ck::Options& options, ck::Context& context)
    : context_(context),
      paths_(ck::support::option_list(options.get("adapter"))),
      to_(options.get("to")),
      export_lora_(options.get_bool("export_lora", false)) {
    if (paths_.size() == 1 && paths_.front().empty())
        throw ck::usage_error("lora: give adapter=FILE.gguf (or adapter={A.gguf,B.gguf})");
    user_scales_ = scales_for(options.get("scale"), paths_.size());
    if (export_lora_ && !to_.empty())
        throw ck::usage_error(
            "lora: to= and export_lora both choose the merged tensors' type: "
            "give one");
}

void Lora::open_adapters(const ck::ModelHeader& in) {
    const ck::Value* arch = in.metadata.find("general.architecture");
    const std::string architecture =
        arch && arch->type() == ck::ValueType::string ? arch->str() : std::string();
    adapters_.clear();
    for (std::size_t i = 0; i < paths_.size(); ++i)
        adapters_.emplace_back(paths_[i], user_scales_[i], architecture, context_);
    const LoraAdapter& first = adapters_.front();
    for (const LoraAdapter& other : adapters_) {
        // llama-export-lora merges adapters of one tensor list only (and finds out after it
        // started writing); here before anything is written, naming a tensor one lacks.
        for (const auto& [one, two] : {std::pair(&first, &other), std::pair(&other, &first)})
            for (const auto& [name, pair] : one->pairs())
                if (!two->pairs().count(name))
                    throw ck::tensor_error("is in " + one->path() + " but not in " + two->path() +
                                               ": adapters merged together must change the same "
                                               "tensors (merge them one after the other)",
                                           name + ".lora_a", two->path());
    }
    for (const auto& [name, pair] : first.pairs())
        if (!in.find_tensor(name))
            throw ck::tensor_error(
                "changes '" + name + "', which the base model does not have (" +
                    (name == "output.weight" ? std::string("its output is tied to token_embd")
                                             : std::string("another model's adapter?")) +
                    "): llama.cpp refuses it, llama-export-lora drops it",
                name + ".lora_a", first.path());
}

std::uint32_t Lora::merged_type(std::uint32_t base) const {
    if (export_lora_)
        return base == type_id(GgmlType::f32) ? type_id(GgmlType::f32) : type_id(GgmlType::f16);
    if (to_ == "f32") return type_id(GgmlType::f32);
    if (to_ == "f16") return type_id(GgmlType::f16);
    if (to_ == "bf16") return type_id(GgmlType::bf16);
    return is_float(base) ? base : type_id(GgmlType::f32);
}

void Lora::check_pair(const Merge& m, const LoraAdapter& adapter,
                      const LoraAdapter::Pair& pair) const {
    const ck::TensorInfo& a = adapter.info(pair.a);
    const ck::TensorInfo& b = adapter.info(pair.b);
    for (const ck::TensorInfo* f : {&a, &b})
        if (!is_float(f->type))
            throw ck::tensor_error("is " + std::string(ck::type_name(f->type)) +
                                       ": LoRA factors are merged from F32, F16 or BF16",
                                   f->name, adapter.path());
    const std::size_t dims = m.matrices > 1 ? 3 : 2;
    bool fits = a.ne.size() == dims && b.ne.size() == dims;
    if (fits && dims == 3) fits = a.ne[2] == m.matrices && b.ne[2] == m.matrices;
    // llama.cpp's checks: W [rows, columns] = B [rows, r] A [r, columns]; for token_embd the
    // factors trade places (lora_a [rows, r] as stored, lora_b [columns, r]).
    if (fits && !m.embedding)
        fits = a.ne[0] == m.columns && b.ne[1] == m.rows && a.ne[1] == b.ne[0];
    if (fits && m.embedding) fits = b.ne[1] == m.columns && a.ne[1] == m.rows && a.ne[0] == b.ne[0];
    if (!fits)
        throw ck::tensor_error("of shape " + a.shape_string() + " with lora_b " + b.shape_string() +
                                   " does not fit the base tensor of " + std::to_string(m.columns) +
                                   " columns and " + std::to_string(m.rows) +
                                   " rows (rank or shape mismatch: " + "another model's adapter?)",
                               a.name, adapter.path());
}

std::optional<Lora::Merge> Lora::plan_merge(const ck::ModelHeader& in, std::size_t index) const {
    const ck::TensorInfo& base = in.tensors[index];
    if (!adapters_.front().pairs().count(base.name)) return std::nullopt;
    Merge m;
    m.name = base.name;
    m.from = base.type;
    m.to = merged_type(base.type);
    if ((base.ne.size() != 2 && base.ne.size() != 3) || base.type >= ck::ggml_type_count ||
        !ck::kernels::plugin_dequant_table().fn[base.type])
        throw ck::tensor_error("is " + std::string(ck::type_name(base.type)) + " of shape " +
                                   base.shape_string() +
                                   ": a LoRA changes a matrix (or a stack of them) of a type "
                                   "that dequantizes",
                               base.name, in.source);
    m.columns = base.ne[0];
    m.rows = base.ne[1];
    m.matrices = base.ne.size() == 3 ? base.ne[2] : 1;
    m.embedding = base.name.starts_with("token_embd");
    for (std::size_t i = 0; i < adapters_.size(); ++i) {
        const LoraAdapter::Pair& pair = adapters_[i].pairs().at(base.name);
        check_pair(m, adapters_[i], pair);
        Term t;
        t.adapter = i;
        t.by_row = m.embedding ? pair.a : pair.b;
        t.by_column = m.embedding ? pair.b : pair.a;
        t.rank = adapters_[i].info(pair.b).ne[0];
        t.scale = adapters_[i].scale(t.rank);
        t.sum = ck::kernels::ggml_lora_sum(static_cast<std::size_t>(t.rank),
                                           static_cast<std::size_t>(m.columns),
                                           static_cast<std::size_t>(m.rows));
        m.terms.push_back(t);
    }
    return m;
}

ck::ModelHeader Lora::plan(const ck::ModelHeader& in) {
    open_adapters(in);
    merges_.clear();
    ck::ModelHeader out = in;
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        merges_.push_back(plan_merge(in, i));
        if (!merges_.back()) continue;
        ck::TensorInfo& t = out.tensors[i];
        t.type = merges_.back()->to;
        t.nbytes = *ck::tensor_bytes(t.type, t.ne);
        context_.explain(t.name, "lora: W + B A merged from " + std::to_string(adapters_.size()) +
                                     " adapter(s)");
    }
    source_.resize(in.tensors.size());
    std::iota(source_.begin(), source_.end(), std::size_t{0});
    if (export_lora_) {
        // llama-export-lora: the tensors by name (a std::map), and general.file_type moved to the
        // end as MOSTLY_F16 whatever the types (gguf_set_val_u32 removes and appends a key).
        std::sort(source_.begin(), source_.end(), [&in](std::size_t x, std::size_t y) {
            return in.tensors[x].name < in.tensors[y].name;
        });
        std::vector<ck::TensorInfo> sorted;
        for (std::size_t i : source_) sorted.push_back(out.tensors[i]);
        out.tensors = std::move(sorted);
        out.metadata.erase("general.file_type");
        out.metadata.set("general.file_type", ck::Value::of_u32(1));
    }
    return out;
}

std::vector<Lora::TermFactors> Lora::factors_for(const Merge& m, std::uint64_t matrix,
                                                 std::uint64_t first_row,
                                                 std::uint64_t rows) const {
    const auto columns = static_cast<std::size_t>(m.columns);
    std::vector<TermFactors> factors;
    for (const Term& t : m.terms) {
        const LoraAdapter& adapter = adapters_[t.adapter];
        const auto rank = static_cast<std::size_t>(t.rank);
        TermFactors f;
        // Widened again for every row block of the matrix: rank x columns conversions against
        // the block's rows x rank x columns multiply-adds, so 1/rows of the work; keeping it
        // across blocks would need a cache shared, under a lock, by the worker threads.
        f.by_column = as_f32(adapter.tensor(t.by_column), adapter.info(t.by_column).type,
                             matrix * rank * columns, rank * columns);
        if (m.embedding) {
            // lora_b is stored [columns][r]: its transpose is the [r][columns] the kernel takes.
            std::vector<float> transposed(f.by_column.size());
            for (std::size_t c = 0; c < columns; ++c)
                for (std::size_t k = 0; k < rank; ++k)
                    transposed[k * columns + c] = f.by_column[c * rank + k];
            f.by_column.swap(transposed);
        }
        f.by_row =
            as_f32(adapter.tensor(t.by_row), adapter.info(t.by_row).type,
                   (matrix * static_cast<std::uint64_t>(m.rows) + first_row) * rank, rows * rank);
        factors.push_back(std::move(f));
    }
    return factors;
}

// Rows [first, first + count) of one matrix of the weight, merged in groups of rows small enough
// to stay in the cache from their widening to F32 to their rounding: `in` holds them as the base
// stores them, `out` receives them as `m.to`.
void Lora::merge_matrix_rows(const Merge& m, std::uint64_t first, std::uint64_t count,
                             const std::byte* in, std::byte* out) const {
    const ck::kernels::LoraAddFn add = ck::kernels::plugin_lora_table().add;
    const ck::kernels::DequantFn widen = ck::kernels::plugin_dequant_table().fn[m.from];
    const ck::kernels::NarrowTable& narrow = ck::kernels::plugin_narrow_table();
    const auto columns = static_cast<std::size_t>(m.columns);
    const std::uint64_t matrix = first / static_cast<std::uint64_t>(m.rows);
    const std::uint64_t local = first % static_cast<std::uint64_t>(m.rows);
    const std::vector<TermFactors> factors = factors_for(m, matrix, local, count);
    const std::size_t in_row = *ck::row_bytes(m.from, columns);
    const std::size_t out_row = *ck::row_bytes(m.to, columns);
    const std::size_t group = std::max<std::size_t>(1, group_values / columns);
    std::vector<float> values(m.to == type_id(GgmlType::f32) ? 0 : group * columns);
    for (std::size_t row = 0; row < count; row += group) {
        const std::size_t n = std::min<std::size_t>(group, count - row);
        float* v = values.empty() ? reinterpret_cast<float*>(out + row * out_row) : values.data();
        widen(in + row * in_row, v, n * columns);
        for (std::size_t i = 0; i < m.terms.size(); ++i) {
            const Term& t = m.terms[i];
            const auto rank = static_cast<std::size_t>(t.rank);
            add(factors[i].by_row.data() + row * rank, factors[i].by_column.data(), rank, columns,
                n, t.sum, t.scale, v);
        }
        if (values.empty())
            ck::le::in_place(v, n * columns);  // host floats to the tensor's byte order
        else
            (m.to == type_id(GgmlType::f16) ? narrow.to_f16 : narrow.to_bf16)(
                v, reinterpret_cast<std::uint16_t*>(out + row * out_row), n * columns);
    }
}

ck::TensorView Lora::merged(const Merge& m, const ck::TensorView& in, ck::RowRange rows) const {
    const auto columns = static_cast<std::uint64_t>(m.columns);
    ck::support::check_tensor_bytes(in, *ck::row_bytes(m.from, rows.count * columns), m.name,
                                    ck::type_name(m.from));
    const std::size_t in_row = *ck::row_bytes(m.from, columns);
    const std::size_t out_row = *ck::row_bytes(m.to, columns);
    ck::TensorAllocation out = ck::TensorView::allocate(rows.count * out_row);
    // A block may hold rows of several matrices (experts): each merges with its own factors.
    for (std::uint64_t row = rows.first; row < rows.first + rows.count;) {
        const std::uint64_t left_in_matrix =
            static_cast<std::uint64_t>(m.rows) - row % static_cast<std::uint64_t>(m.rows);
        const std::uint64_t n = std::min(rows.first + rows.count - row, left_in_matrix);
        const std::uint64_t at = row - rows.first;
        merge_matrix_rows(m, row, n, in.data() + at * in_row, out.bytes.data() + at * out_row);
        row += n;
    }
    in.release(0, in.size());  // read once: its pages leave the resident set
    return std::move(out.view);
}

ck::TensorView Lora::apply(std::size_t index, const ck::Upstream& upstream) {
    const std::size_t input = source_.at(index);
    ck::TensorView in = upstream(input);
    const std::optional<Merge>& m = merges_.at(input);
    if (!m) return in;
    return merged(*m, in, {0, static_cast<std::uint64_t>(m->rows * m->matrices)});
}

ck::TensorView Lora::apply_rows(std::size_t index, ck::RowRange rows,
                                const ck::UpstreamRows& upstream) {
    const std::size_t input = source_.at(index);
    ck::TensorView in = upstream(input, rows);
    const std::optional<Merge>& m = merges_.at(input);
    return m ? merged(*m, in, rows) : in;
}

}  // namespace ckplugin::lora
