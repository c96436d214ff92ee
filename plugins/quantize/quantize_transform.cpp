// The quantize transform `quantize[to=TYPE | mix=NAME, ...]`.
//
// `to=TYPE` gives every selected 2-D weight one type; `mix=NAME` chooses each tensor's type as
// llama-quantize does for that named file type (mixture.hpp). Rows are quantized with ggml's
// reference quantizers (ck/kernels/quantize.hpp), so an F16 or F32 model becomes, byte for byte,
// what llama-quantize writes without an importance matrix. A quantized input is dequantized
// exactly first when `requantize=1` (llama-quantize's --allow-requantize), copied with
// `keep_quantized=1`, and refused otherwise.
#include "quantize_transform.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <boost/algorithm/string/case_conv.hpp>
#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>
#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/kernels/dequant.hpp"
#include "ck/kernels/quantize.hpp"
#include "ck/llama/file_type.hpp"
#include "ck/llama/tensors.hpp"
#include "ck/parallel.hpp"
#include "ck/stage.hpp"
#include "ck/suggest.hpp"
#include "ck/support/little_endian.hpp"
#include "ck/support/tensor_io.hpp"
#include "ck/tensor_filter.hpp"
#include "gguf_split_plan.hpp"

namespace ckplugin::quantize {
namespace {

using ck::GgmlType;

// Elements per pool item: large enough that scheduling costs nothing, small enough that a
// tensor of a few MB still spreads over every thread.
constexpr std::uint64_t elements_per_item = 1 << 16;

// F32 "quantized": the widened row as it is. The kernels have no quantizer for F32 (nothing is
// lost), but llama-quantize's F32 file type and --output-tensor-type f32 store weights so.
void store_row_f32(const float* x, std::byte* out, std::size_t n) {
    ck::le::store_array(out, x, n);
}

// The row function that writes `type`, or nullptr when there is none.
ck::kernels::QuantizeRowFn row_encoder(std::uint32_t type) {
    if (type == static_cast<std::uint32_t>(GgmlType::f32)) return store_row_f32;
    return ck::kernels::best_quantizer(type);
}

// A type named in an option (`output_type=q8_0`), or a usage error listing what is accepted.
std::uint32_t target_type(const std::string& option, const std::string& name) {
    const ck::TypeInfo* info = ck::find_type(name);
    if (!info || (!row_encoder(info->id) && !ck::kernels::weighted_quantizer(info->id)))
        throw ck::usage_error("quantize: " + option + "=" + name +
                              ": no quantizer for that type (types: " + target_choices + ")");
    return info->id;
}

// A list option's items: llama-quantize takes its flag once per item; a stage option holds them
// separated by spaces (the form of llama-quantize's --tensor-type-file).
std::vector<std::string> items_of(const std::string& value) {
    std::vector<std::string> items;
    boost::algorithm::split(items, value, boost::algorithm::is_space(),
                            boost::algorithm::token_compress_on);
    std::erase(items, std::string());
    return items;
}

// tensor_type="PATTERN=TYPE ...", as llama-quantize's --tensor-type: the pattern in lower case.
std::vector<TensorTypeOverride> tensor_type_overrides(const std::string& value) {
    std::vector<TensorTypeOverride> out;
    for (const std::string& item : items_of(value)) {
        const std::size_t equals = item.find('=');
        if (equals == std::string::npos || equals == 0 || equals + 1 == item.size())
            throw ck::usage_error("quantize: tensor_type: '" + item +
                                  "' is not PATTERN=TYPE (e.g. attn_v=q8_0)");
        out.push_back({boost::algorithm::to_lower_copy(item.substr(0, equals)),
                       target_type("tensor_type", item.substr(equals + 1))});
    }
    return out;
}

// llama-quantize keeps at most 127 bytes of a string it records (a fixed char[128] override).
std::string as_recorded(const std::string& text) {
    return text.substr(0, 127);
}

}  // namespace

Quantize::Quantize(const ck::Options& options, ck::Context& context)
    : filter_(options),
      context_(context),
      requantize_(options.get_bool("requantize", false)),
      keep_quantized_(options.get_bool("keep_quantized", false)) {
    const std::string to = options.get("to"), mix = options.get("mix");
    if (!to.empty() && !mix.empty())
        throw ck::usage_error(
            "quantize: give to=TYPE (one type for every weight) or "
            "mix=NAME (llama-quantize's choice per tensor), not both");
    if (requantize_ && keep_quantized_)
        throw ck::usage_error(
            "quantize: requantize=1 and keep_quantized=1 contradict each "
            "other (quantize already quantized tensors again, or copy them)");
    if (!mix.empty()) {
        // A name, or as llama-quantize also takes it, the file type's number (15: Q4_K_M).
        std::optional<MixInfo> info = find_mix(mix);
        if (!info) info = find_mix_by_number(mix);
        if (!info) {
            // Compared without case and underscores: `q4km` is Q4_K_M.
            const auto squeeze = [](std::string n) {
                n = boost::algorithm::to_lower_copy(n);
                n.erase(std::remove(n.begin(), n.end(), '_'), n.end());
                return n;
            };
            std::string names;
            std::vector<std::string> squeezed;
            for (const std::string& n : mix_names()) {
                names += (names.empty() ? "" : " ") + n;
                squeezed.push_back(squeeze(n));
            }
            const auto near = ck::closest_names(squeeze(mix), squeezed);
            std::string suggestion;
            if (!near.empty())
                for (const std::string& n : mix_names())
                    if (squeeze(n) == near.front() && suggestion.empty())
                        suggestion = boost::algorithm::to_lower_copy(n);
            throw ck::usage_error(
                "quantize: unknown mix '" + mix + "'" +
                (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?") +
                " (mixtures: " + names +
                ", or llama-quantize's file type "
                "numbers, e.g. 15 for Q4_K_M)");
        }
        settings_.emplace();
        settings_->mix = *info;
        settings_->pure = options.get_bool("pure", false);
        settings_->leave_output = options.get_bool("leave_output", false);
        if (const std::string t = options.get("output_type"); !t.empty())
            settings_->output_type = target_type("output_type", t);
        if (const std::string t = options.get("embd_type"); !t.empty())
            settings_->embd_type = target_type("embd_type", t);
        settings_->tensor_types = tensor_type_overrides(options.get("tensor_type"));
    } else {
        for (const char* only_with_mix :
             {"output_type", "embd_type", "pure", "leave_output", "tensor_type"})
            if (!options.get(only_with_mix).empty())
                throw ck::usage_error(std::string("quantize: ") + only_with_mix +
                                      " works with mix=NAME only");
        target_ = target_type("to", to.empty() ? "q8_0" : to);
    }
    // llama-quantize's file by default with a mixture; with one type the input's order, which
    // is what convert_hf_to_gguf.py writes for --outtype q8_0.
    const std::string order = options.get("order", settings_ ? "llama" : "input");
    if (order != "llama" && order != "input" && order != "keep_split")
        throw ck::usage_error("quantize: order=" + order + ": expected llama, input or keep_split");
    llama_order_ = order == "llama";
    llama_keys_ = order != "input";
    // llama-quantize --keep-split chooses the types in the order it writes the tensors.
    if (settings_) settings_->input_order = order == "keep_split";
    read_importance_options(options);
}

void Quantize::read_importance_options(const ck::Options& options) {
    const std::vector<std::string> include = items_of(options.get("include_weights"));
    const std::vector<std::string> exclude = items_of(options.get("exclude_weights"));
    imatrix_argument_ = options.get("imatrix");
    if (imatrix_argument_.empty() && (!include.empty() || !exclude.empty()))
        throw ck::usage_error(
            "quantize: include_weights and exclude_weights choose entries of "
            "an importance matrix: give imatrix=FILE too");
    if (!include.empty() && !exclude.empty())
        throw ck::usage_error(
            "quantize: include_weights and exclude_weights cannot be used "
            "together (as in llama-quantize)");
    if (const std::string prune = options.get("prune_layers"); !prune.empty())
        prune_list_ = parse_prune_list(prune);
    if (imatrix_argument_.empty()) return;
    imatrix_ = ImportanceMatrix::load(imatrix_argument_);
    imatrix_->filter(include, exclude);
    // llama-quantize uses the matrix only when entries are left after the filters.
    if (imatrix_->size() == 0) {
        context_.warn(
            "quantize: no importance matrix entry is left after include_weights / "
            "exclude_weights: quantizing without one, as llama-quantize does");
        imatrix_.reset();
    }
    if (imatrix_ && settings_) settings_->has_imatrix = true;
}

ck::ModelHeader Quantize::plan(const ck::ModelHeader& input) {
    filter_.check_matches(input, "quantize");
    pruned_.reset();
    if (!prune_list_.empty()) pruned_ = prune_layers(input, prune_list_);
    const ck::ModelHeader& in = pruned_ ? pruned_->header : input;
    ck::ModelHeader out = in;
    jobs_.assign(in.tensors.size(), std::nullopt);
    std::vector<std::string> rules(in.tensors.size());
    std::optional<std::uint32_t> file_type;
    if (settings_) {
        const auto mix = ckplugin::quantize::plan_mixture(in, *settings_);
        file_type = mix.file_type;
        // In the order llama-quantize goes through them, so a refusal names the tensor it names.
        std::vector<std::size_t> order(in.tensors.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        if (!settings_->input_order) order = ck::llama::loader_order(in);
        for (const std::size_t i : order) {
            rules[i] = mix.tensors[i].rule;
            if (mix.tensors[i].quantized)
                plan_tensor(in, i, mix.tensors[i].type, mix.tensors[i].requires_imatrix, rules[i]);
        }
    } else {
        for (std::size_t i = 0; i < in.tensors.size(); ++i) rules[i] = plan_one_type(in, i);
    }
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        if (!jobs_[i]) continue;
        out.tensors[i].type = jobs_[i]->to;
        out.tensors[i].nbytes = *ck::tensor_bytes(jobs_[i]->to, out.tensors[i].ne);
    }
    // One type for every weight is no named mixture: the file type is llama.cpp's name
    // for what the tensors became (to=q4_k: MOSTLY_Q4_K_M; to=q8_0 with only= on a few
    // tensors of an F16 model: still MOSTLY_F16).
    if (!settings_)
        if (const auto guess = ck::llama::guess_file_type(out); guess.file_type)
            file_type = static_cast<std::uint32_t>(*guess.file_type);
    if (std::any_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return j.has_value(); })) {
        out.metadata.set(std::string(ck::llama::quantization_version_key),
                         ck::Value::of_u32(ck::llama::quantization_version));
        // Without a name (the input was mostly of a type llama.cpp cannot name), the host
        // decides after plan() (ck::llama::keep_file_type_true).
        if (file_type)
            out.metadata.set(std::string(ck::llama::file_type_key), ck::Value::of_u32(*file_type));
    }
    report(in, out, rules, file_type);
    source_.clear();
    if (llama_keys_) use_llama_layout(out, file_type);
    add_run_keys(out);
    return out;
}

void Quantize::add_run_keys(ck::ModelHeader& out) const {
    // gguf_set_val_* removes a key and appends it: each of these ends the metadata in turn.
    const auto append = [&out](const std::string& key, ck::Value value) {
        out.metadata.erase(key);
        out.metadata.set(key, std::move(value));
    };
    if (imatrix_) {
        append("quantize.imatrix.file", ck::Value::of_string(as_recorded(imatrix_argument_)));
        if (!imatrix_->dataset().empty())
            append("quantize.imatrix.dataset",
                   ck::Value::of_string(as_recorded(imatrix_->dataset())));
        append("quantize.imatrix.entries_count",
               ck::Value::of_u32(static_cast<std::uint32_t>(imatrix_->size())));
        if (imatrix_->chunk_count() > 0)
            append("quantize.imatrix.chunks_count",
                   ck::Value::of_u32(static_cast<std::uint32_t>(imatrix_->chunk_count())));
    }
    if (pruned_) {
        const ck::Value* arch = out.metadata.find("general.architecture");
        if (arch && arch->type() == ck::ValueType::string)
            append(arch->str() + ".block_count", ck::Value::of_u32(pruned_->block_count));
    }
}

// to=TYPE for tensor i: the tensors llama-quantize never quantizes are copied; a row that
// TYPE's block does not divide gets llama.cpp's fallback type (F16 for a 32-element type such
// as Q8_0, as llama-quantize and convert_hf_to_gguf.py write it). Returns the rule.
std::string Quantize::plan_one_type(const ck::ModelHeader& in, std::size_t i) {
    const ck::TensorInfo& t = in.tensors[i];
    if (std::optional<std::string> why = not_quantizable(t)) return *why;
    std::string rule = "to=" + std::string(ck::type_name(target_));
    // Every type to= offers has a fallback; a new one without is refused, saying so.
    const std::uint32_t to = fallback_type_or_refuse(t, target_, in.source);
    if (to != target_) {
        const std::string why = fallback_reason(target_, t.ne[0], to);
        rule += "; fallback: " + why;
        context_.warn(ck::support::tensor_subject(t.name) + ": " + why +
                      ", as llama-quantize and convert_hf_to_gguf.py write it");
    }
    plan_tensor(in, i, to, requires_imatrix(t.name, to, 0), rule);
    return rule;
}

void Quantize::use_llama_layout(ck::ModelHeader& out, std::optional<std::uint32_t> file_type) {
    if (llama_order_) {
        source_ = ck::llama::loader_order(out);
        std::vector<ck::TensorInfo> ordered;
        ordered.reserve(out.tensors.size());
        for (std::size_t i : source_) ordered.push_back(std::move(out.tensors[i]));
        out.tensors = std::move(ordered);
    }
    // llama-quantize removes the split keys of a set it reads (or of a merged file): its output
    // is one file, or with --keep-split shards whose keys the writer's split_counts sets.
    for (const std::string_view key :
         {ckplugin::gguf::split_no_key, ckplugin::gguf::split_count_key,
          ckplugin::gguf::split_tensors_count_key})
        out.metadata.erase(key);
    // gguf_set_val_* removes a key and appends it: these two end the metadata, in this order.
    const std::string version_key(ck::llama::quantization_version_key);
    const std::string type_key(ck::llama::file_type_key);
    out.metadata.erase(version_key);
    out.metadata.set(version_key, ck::Value::of_u32(ck::llama::quantization_version));
    if (const ck::Value* v = out.metadata.find(type_key); v || file_type) {
        const ck::Value value = file_type ? ck::Value::of_u32(*file_type) : *v;
        out.metadata.erase(type_key);
        out.metadata.set(type_key, value);
    }
}

ck::TensorView Quantize::apply(std::size_t index, const ck::Upstream& upstream) {
    const std::size_t from = source_of(index);
    ck::TensorView in = upstream(input_of(from));
    const auto& job = jobs_.at(from);
    return job ? quantize_rows(*job, in, 0, job->rows) : in;
}

std::uint64_t Quantize::row_granule(std::size_t index, const ck::UpstreamGranule& upstream) const {
    return upstream(input_of(source_of(index)));
}

ck::TensorView Quantize::apply_rows(std::size_t index, ck::RowRange rows,
                                    const ck::UpstreamRows& upstream) {
    const std::size_t from = source_of(index);
    ck::TensorView in = upstream(input_of(from), rows);
    const auto& job = jobs_.at(from);
    return job ? quantize_rows(*job, in, rows.first, rows.count) : in;
}

ck::TensorView Quantize::quantize_rows(const Job& job, const ck::TensorView& in,
                                       std::uint64_t first_row, std::uint64_t rows) {
    // Every dequant variant is bit-exact, so the fastest widening gives ggml's values too
    // (for a quantized input: exactly what llama-quantize's dequantization gives).
    const auto widen = ck::kernels::plugin_dequant_table().fn[job.from];
    const std::uint64_t in_row = *ck::row_bytes(job.from, job.row_length);
    const std::uint64_t out_row = *ck::row_bytes(job.to, job.row_length);
    if (in.bytes().size() != in_row * rows)
        throw ck::Error("tensor byte size does not match its shape");
    ck::TensorAllocation out = ck::TensorView::allocate(out_row * rows);
    // Rows are independent: groups of rows (fixed by the shape, not the thread count) go
    // to the pool. A group is widened into one buffer and quantized in one call: a row's
    // blocks follow the previous row's in the output as in a longer row, and the SIMD
    // K-quant quantizers need many blocks per call (one block per lane, 16 lanes; a
    // 2048-wide row has only 8).
    const std::uint64_t rows_per_item =
        std::max<std::uint64_t>(1, elements_per_item / job.row_length);
    const std::byte* src = in.bytes().data();
    ck::parallel_chunks(rows, rows_per_item, [&](std::size_t first, std::size_t end) {
        std::vector<float> values((end - first) * job.row_length);
        for (std::size_t r = first; r < end; ++r)
            widen(src + r * in_row, values.data() + (r - first) * job.row_length, job.row_length);
        std::byte* const dst = out.bytes.data() + first * out_row;
        if (!job.weighted) {
            job.quantize(values.data(), dst, values.size());
        } else {
            // One call for the whole group where blocks are independent (the SIMD variants
            // need many blocks per call), each row beside its expert's weights; else row by row.
            const std::size_t rows_per_call =
                ck::kernels::weighted_blocks_are_independent(job.to) ? end - first : 1;
            std::vector<float> weights;
            if (job.importance) {
                weights.resize(values.size());
                for (std::size_t r = first; r < end; ++r) {
                    const std::uint64_t expert = (first_row + r) / job.rows_per_expert;
                    std::copy_n(job.importance->data() + expert * job.row_length, job.row_length,
                                weights.data() + (r - first) * job.row_length);
                }
            }
            for (std::size_t r = 0; r < end - first; r += rows_per_call) {
                const std::size_t at = r * job.row_length;
                job.weighted(values.data() + at, dst + r * out_row, rows_per_call * job.row_length,
                             job.importance ? weights.data() + at : nullptr);
            }
        }
        // The rows read are not read again: their input pages leave the resident set (a
        // page shared with a neighbouring group is simply read again from the page cache),
        // so the input and the output of a large tensor are never resident together.
        in.release(first * in_row, end * in_row);
        ck::throw_if_interrupted();
    });
    return std::move(out.view);
}

// Plans tensor i of `in` to become `to`, or leaves it (rule says why) when it cannot.
void Quantize::plan_tensor(const ck::ModelHeader& in, std::size_t i, std::uint32_t to,
                           bool requires_importance, std::string& rule) {
    const ck::TensorInfo& t = in.tensors[i];
    if (!filter_.selects(t.name)) {
        rule = "not selected by only/skip: copied";
        return;
    }
    if (t.type == to) {
        rule += " (input is already " + std::string(ck::type_name(to)) + ": copied)";
        return;
    }
    const ck::TypeInfo* from = ck::find_type(t.type);
    if (!from || !from->dequantizable) {
        rule = "not a float or quantized tensor: copied";
        return;
    }
    if (from->quantized) {
        if (keep_quantized_) {
            rule += " (input is " + std::string(from->name) + ": kept, keep_quantized=1)";
            return;
        }
        if (!requantize_ && ck::find_type(to)->quantized)
            throw ck::tensor_error(
                "is already " + std::string(from->name) + "; quantizing it again to " +
                    std::string(ck::type_name(to)) +
                    " adds the error of both: pass requantize=1 to dequantize it exactly and "
                    "quantize again (llama-quantize's --allow-requantize), or "
                    "keep_quantized=1 to copy quantized tensors as they are",
                t.name, in.source);
        // To a float type nothing is lost twice, but llama-quantize still asks for
        // --allow-requantize, and so does this stage: the same command line means the same.
        if (!requantize_)
            throw ck::tensor_error(
                "is already " + std::string(from->name) + "; widening it to " +
                    std::string(ck::type_name(to)) +
                    " is exact, but llama-quantize asks for --allow-requantize here: pass "
                    "requantize=1, use a dequant[to=" +
                    std::string(ck::type_name(to)) +
                    "] stage, or keep_quantized=1 to copy quantized tensors as they are",
                t.name, in.source);
        rule += " (requantized from " + std::string(from->name) + ")";
    }
    const auto row_length = static_cast<std::uint64_t>(t.ne[0]);
    Job job{t.type, to, row_length, t.elements() / row_length, row_encoder(to)};
    job.importance = importance_for(in, i, to, requires_importance, rule);
    // The weighted quantizer with the tensor's weights, and for the types ggml has only a
    // weighted quantizer for (the IQ grids, IQ4_XS) also without.
    if (job.importance || !job.quantize) job.weighted = ck::kernels::best_weighted_quantizer(to);
    job.rows_per_expert = t.ne.size() > 1 ? static_cast<std::uint64_t>(t.ne[1]) : 1;
    // A mixture or option naming a type without a row function is this plugin's bug:
    // say so rather than call through a null pointer.
    if (!job.quantize && !job.weighted)
        throw ck::tensor_error("quantize has no row function for " + std::string(ck::type_name(to)),
                               t.name, in.source);
    jobs_[i] = job;
}

const ImportanceMatrix::Entry* Quantize::importance_for(const ck::ModelHeader& in, std::size_t i,
                                                        std::uint32_t to, bool required,
                                                        std::string& rule) const {
    const ck::TensorInfo& t = in.tensors[i];
    const std::string type = boost::algorithm::to_upper_copy(std::string(ck::type_name(to)));
    const ImportanceMatrix::Entry* entry = nullptr;
    if (imatrix_) {
        // After prune_layers the entry keeps the tensor's input name.
        entry = imatrix_->find(pruned_ ? pruned_->old_name[i] : t.name);
        const std::int64_t experts = t.ne.size() > 2 ? t.ne[2] : 1;
        const std::int64_t size = t.ne[0] * experts;
        const bool embedding =
            t.name == "token_embd.weight" || t.name == "per_layer_token_embd.weight";
        if (!entry) {
            rule += "; no importance matrix entry: quantized without weights";
        } else if (static_cast<std::int64_t>(entry->size()) != size && !embedding) {
            throw ck::tensor_error("imatrix size " + std::to_string(entry->size()) +
                                       " is different from tensor size " + std::to_string(size) +
                                       " (the importance matrix was made for another model)",
                                   t.name, in.source);
        } else if (static_cast<std::int64_t>(entry->size()) != size) {
            rule += "; importance matrix entry of another size ignored, as llama-quantize does";
            entry = nullptr;
        } else if (!ck::kernels::weighted_quantizer(to)) {
            rule += "; " + type + " takes no importance weights";
            entry = nullptr;
        } else {
            rule += "; importance matrix weights";
        }
    }
    if (!entry && (required || ck::kernels::quantizer_requires_weights(to)))
        throw ck::tensor_error(
            imatrix_ ? "has no importance matrix entry, and " + type +
                           " is a very low-bit quantization that needs one: the result would be "
                           "garbage (llama-quantize refuses it too). Give it another type "
                           "(tensor_type=PATTERN=TYPE) or use an importance matrix that has it"
                     : "would be " + type +
                           ", which needs an importance matrix (as llama-quantize says: this "
                           "quantization requires an importance matrix): give imatrix=FILE, made "
                           "by llama-imatrix",
            t.name, in.source);
    return entry;
}

// The "quantize" report (each tensor's types, rule and sizes; bits per weight), and each
// tensor's rule as its reason (Context::explain), which --dry-run prints beside the tensor.
void Quantize::report(const ck::ModelHeader& in, const ck::ModelHeader& out,
                      const std::vector<std::string>& rules,
                      std::optional<std::uint32_t> file_type) {
    nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
    std::uint64_t elements = 0, bytes_in = 0, bytes_out = 0;
    for (std::size_t i = 0; i < in.tensors.size(); ++i) {
        const ck::TensorInfo &a = in.tensors[i], &b = out.tensors[i];
        tensors.push_back({{"name", a.name},
                           {"from", std::string(ck::type_name(a.type))},
                           {"to", std::string(ck::type_name(b.type))},
                           {"rule", rules[i]},
                           {"bytes_in", a.nbytes},
                           {"bytes_out", b.nbytes}});
        context_.explain(a.name, rules[i]);
        elements += a.elements();
        bytes_in += a.nbytes;
        bytes_out += b.nbytes;
    }
    const auto bpw = [&](std::uint64_t bytes) {
        return elements ? 8.0 * static_cast<double>(bytes) / static_cast<double>(elements) : 0.0;
    };
    nlohmann::ordered_json r = {
        {"mix", settings_ ? nlohmann::ordered_json(settings_->mix.name) : nullptr},
        {"to", settings_ ? nullptr : nlohmann::ordered_json(ck::type_name(target_))},
        {"file_type", file_type ? nlohmann::ordered_json(*file_type) : nullptr},
        {"totals",
         {{"elements", elements},
          {"bytes_in", bytes_in},
          {"bytes_out", bytes_out},
          {"bits_per_weight_in", bpw(bytes_in)},
          {"bits_per_weight", bpw(bytes_out)}}},
        {"tensors", tensors}};
    context_.report("quantize", r.dump());
}

}  // namespace ckplugin::quantize
