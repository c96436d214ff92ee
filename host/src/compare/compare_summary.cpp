#include "compare/compare_summary.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace ckhost::compare {

void Group::add(const TensorResult& r) {
    ++tensors;
    if (r.weighted) ++weighted_tensors;
    elements += r.a->elements;
    stored_bytes_a += r.a->stored_bytes;
    stored_bytes_b += r.b->stored_bytes;
    sums.add(r.sums);
}

double Group::bits_per_weight_a() const {
    return elements ? static_cast<double>(stored_bytes_a) * 8 / static_cast<double>(elements) : 0;
}

double Group::bits_per_weight_b() const {
    return elements ? static_cast<double>(stored_bytes_b) * 8 / static_cast<double>(elements) : 0;
}

std::optional<std::uint64_t> layer_of(std::string_view name) {
    constexpr std::string_view prefix = "blk.";
    if (!name.starts_with(prefix)) return std::nullopt;
    const std::string_view rest = name.substr(prefix.size());
    std::uint64_t layer = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), layer);
    if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.')
        return std::nullopt;
    return layer;
}

std::string kind_of(std::string_view name) {
    if (!layer_of(name)) return std::string(name);
    const std::string_view rest = name.substr(4);
    return std::string(rest.substr(rest.find('.') + 1));
}

namespace {

// The group named `name` in `groups`, added at the end when it is new.
Group& group_named(std::vector<Group>& groups, const std::string& name) {
    const auto found =
        std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.name == name; });
    if (found != groups.end()) return *found;
    groups.push_back(Group{});
    groups.back().name = name;
    return groups.back();
}

}  // namespace

Summary summarize(const PairResult& pair) {
    Summary s;
    s.model.name = "model";
    for (Status status : {Status::compared, Status::non_finite, Status::only_in_a,
                          Status::only_in_b, Status::shape_mismatch, Status::not_comparable})
        s.counts[status] = 0;
    std::map<std::uint64_t, Group> layers;
    for (const TensorResult& r : pair.tensors) {
        ++s.counts[r.status];
        if (r.status != Status::compared) continue;
        if (r.sums.sum_d2 == 0) ++s.identical;
        s.model.add(r);
        group_named(s.by_type, r.b->type_name).add(r);
        group_named(s.by_kind, kind_of(r.name)).add(r);
        if (const auto layer = layer_of(r.name)) {
            Group& g = layers[*layer];
            g.name = "blk." + std::to_string(*layer);
            g.add(r);
        }
    }
    std::sort(s.by_type.begin(), s.by_type.end(),
              [](const Group& x, const Group& y) { return x.name < y.name; });
    for (auto& [layer, group] : layers) s.by_layer.push_back(std::move(group));
    return s;
}

namespace {

// A tensor's place in the order: NaN-holding first, then by SNR; nullopt when not compared.
std::optional<double> sort_key(const TensorResult& r) {
    if (r.status == Status::non_finite) return -std::numeric_limits<double>::infinity();
    if (r.status != Status::compared) return std::nullopt;
    return snr_for_sorting(figures_of(r.sums));
}

}  // namespace

std::vector<std::size_t> worst_first(const Report& report, std::optional<std::size_t> pair) {
    if (report.pairs.empty()) return {};
    std::vector<std::pair<double, std::size_t>> keyed;
    const std::size_t tensors_of_a = static_cast<std::size_t>(
        std::count_if(report.pairs[0].tensors.begin(), report.pairs[0].tensors.end(),
                      [](const auto& r) { return r.status != Status::only_in_b; }));
    for (std::size_t i = 0; i < tensors_of_a; ++i) {
        std::optional<double> worst;
        for (std::size_t p = 0; p < report.pairs.size(); ++p) {
            if (pair && p != *pair) continue;
            const std::optional<double> key = sort_key(report.pairs[p].tensors[i]);
            if (key && (!worst || *key < *worst)) worst = key;
        }
        if (worst) keyed.emplace_back(*worst, i);
    }
    const TensorResult* names = report.pairs[0].tensors.data();
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        if (x.first != y.first) return x.first < y.first;
        return names[x.second].name < names[y.second].name;
    });
    std::vector<std::size_t> order;
    for (const auto& entry : keyed) order.push_back(entry.second);
    return order;
}

}  // namespace ckhost::compare
