// The --json form of `ckhost compare` (docs/json.md, docs/schema/compare.schema.json): every
// figure a number, or null where it is none (the SNR of identical values is +infinity, which
// JSON cannot hold: null with "identical": true).
#include <nlohmann/json.hpp>

#include "ck/ggml_types.hpp"
#include "compare/compare.hpp"

namespace ckhost::compare {
namespace {

using nlohmann::json;

json optional_json(const std::optional<double>& value) {
    return value ? json(*value) : json(nullptr);
}

void add_figures(json& j, const ErrorSums& sums) {
    const Figures f = figures_of(sums);
    j["identical"] = f.identical;
    j["rmse"] = optional_json(f.rmse);
    j["max_abs_error"] = optional_json(f.max_abs);
    j["relative_error"] = optional_json(f.relative);
    j["cosine"] = optional_json(f.cosine);
    j["snr_db"] = optional_json(f.snr_db);
    j["weighted_error"] = optional_json(f.weighted_error);
    j["weighted_snr_db"] = optional_json(f.weighted_snr_db);
}

json group_json(const Group& g) {
    json j = {{"name", g.name},
              {"tensors", g.tensors},
              {"weighted_tensors", g.weighted_tensors},
              {"elements", g.elements},
              {"bits_per_weight_a", g.bits_per_weight_a()},
              {"bits_per_weight_b", g.bits_per_weight_b()}};
    add_figures(j, g.sums);
    return j;
}

json groups_json(const std::vector<Group>& groups) {
    json list = json::array();
    for (const Group& g : groups) list.push_back(group_json(g));
    return list;
}

json side_json(const std::optional<Side>& side, const char* field) {
    if (!side) return nullptr;
    if (std::string_view(field) == "type") return side->type_name;
    if (std::string_view(field) == "shape") return side->ne;
    return side->bits_per_weight();
}

json tensor_json(const TensorResult& r) {
    json j = {{"name", r.name}, {"status", status_name(r.status)}};
    for (const char* field : {"type", "shape", "bits_per_weight"}) {
        j[std::string(field) + "_a"] = side_json(r.a, field);
        j[std::string(field) + "_b"] = side_json(r.b, field);
    }
    j["elements"] = r.a ? r.a->elements : r.b->elements;
    add_figures(j, r.sums);
    if (r.status != Status::compared) j["identical"] = false;
    j["weighted"] = r.weighted;
    j["non_finite"] = nullptr;
    if (r.status == Status::non_finite)
        j["non_finite"] = {{"nan_a", r.non_finite.nan_a},
                           {"inf_a", r.non_finite.inf_a},
                           {"nan_b", r.non_finite.nan_b},
                           {"inf_b", r.non_finite.inf_b}};
    j["note"] = r.note.empty() ? json(nullptr) : json(r.note);
    return j;
}

json counts_json(const PairResult& pair, const Summary& s) {
    json counts = {{"tensors", pair.tensors.size()}, {"identical", s.identical}};
    for (const auto& [status, count] : s.counts) counts[status_name(status)] = count;
    return counts;
}

}  // namespace

json report_json(const Report& report) {
    json comparisons = json::array();
    for (std::size_t p = 0; p < report.pairs.size(); ++p) {
        const PairResult& pair = report.pairs[p];
        const Summary& s = report.summaries[p];
        json tensors = json::array();
        for (const TensorResult& r : pair.tensors) tensors.push_back(tensor_json(r));
        comparisons.push_back({{"b", {{"file", pair.file}, {"format", pair.format}}},
                               {"counts", counts_json(pair, s)},
                               {"model", group_json(s.model)},
                               {"by_type", groups_json(s.by_type)},
                               {"by_layer", groups_json(s.by_layer)},
                               {"by_kind", groups_json(s.by_kind)},
                               {"tensors", tensors}});
    }
    return {{"a", {{"file", report.file_a}, {"format", report.format_a}}},
            {"imatrix", report.imatrix.empty() ? json(nullptr) : json(report.imatrix)},
            {"comparisons", comparisons}};
}

}  // namespace ckhost::compare
