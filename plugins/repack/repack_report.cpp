#include "repack_report.hpp"

#include <cmath>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "ck/ggml_types.hpp"

using nlohmann::ordered_json;

namespace ckplugin::repack {
using namespace ck;
namespace {

// JSON has no NaN or infinity: such figures (from NaN or infinite weights) are null.
ordered_json number(double v) {
    if (!std::isfinite(v)) return nullptr;
    return v;
}

bool warned(SkipReason::Kind kind) {
    return kind == SkipReason::Kind::no_path || kind == SkipReason::Kind::block_rule ||
           kind == SkipReason::Kind::name_taken;
}

}  // namespace

RepackReport::RepackReport(Context& context, std::string target, std::string kernels)
    : context_(context), target_(std::move(target)), kernels_(std::move(kernels)) {}

std::size_t RepackReport::planned(std::string name, std::string from, std::uint64_t elements,
                                  std::uint64_t bytes_in, std::uint64_t bytes_out) {
    Planned p;
    p.name = std::move(name);
    p.from = std::move(from);
    p.elements = elements;
    p.bytes_in = bytes_in;
    p.bytes_out = bytes_out;
    planned_.push_back(std::move(p));
    return planned_.size() - 1;
}

void RepackReport::skipped(std::string name, std::uint32_t type, SkipReason reason) {
    skipped_.push_back({std::move(name), type, std::move(reason)});
}

void RepackReport::finish_plan() {
    // One warning per reason, naming a few of the tensors: a Q4_K_M model asked for NF4 would
    // otherwise print one line per weight.
    std::map<std::string, std::vector<std::string>> by_reason;
    std::vector<std::string> order;
    for (const Skipped& s : skipped_) {
        if (!warned(s.reason.kind)) continue;
        auto [it, fresh] = by_reason.try_emplace(s.reason.why);
        if (fresh) order.push_back(s.reason.why);
        it->second.push_back(s.name);
    }
    for (const std::string& why : order) {
        const auto& names = by_reason[why];
        std::string list;
        for (std::size_t i = 0; i < names.size() && i < 3; ++i)
            list += (i ? ", " : "") + std::string("'") + names[i] + "'";
        if (names.size() > 3) list += ", ...";
        context_.warn(
            "repack: " + std::to_string(names.size()) +
            (names.size() == 1 ? " tensor stays as it is: " : " tensors stay as they are: ") + why +
            " (" + list + ")");
    }
    publish();
}

void RepackReport::done(std::size_t entry, const kernels::RepackError& error) {
    Planned& p = planned_.at(entry);
    if (p.done) return;
    p.done = true;
    p.error = error;
    // Publishing rebuilds the whole report: do it once, when the last tensor is in.
    if (++done_count_ == planned_.size()) publish();
}

void RepackReport::publish() const {
    ordered_json tensors = ordered_json::array();
    kernels::RepackError total;
    std::uint64_t bytes_in = 0, bytes_out = 0;
    for (const Planned& p : planned_) {
        ordered_json t = {{"name", p.name},
                          {"from", p.from},
                          {"elements", p.elements},
                          {"bytes_in", p.bytes_in},
                          {"bytes_out", p.bytes_out}};
        if (p.done) {
            t["rel_rms_error"] = number(p.error.relative_rms());
            t["max_abs_error"] = number(p.error.max_abs_error);
            total.add(p.error);
            bytes_in += p.bytes_in;
            bytes_out += p.bytes_out;
        }
        tensors.push_back(std::move(t));
    }
    ordered_json skipped = ordered_json::array();
    for (const Skipped& s : skipped_)
        skipped.push_back(
            {{"name", s.name}, {"type", std::string(type_name(s.type))}, {"reason", s.reason.why}});
    ordered_json totals = {{"planned", planned_.size()}, {"repacked", done_count_},
                           {"skipped", skipped_.size()}, {"elements", total.elements},
                           {"bytes_in", bytes_in},       {"bytes_out", bytes_out}};
    if (done_count_ > 0) {
        totals["rel_rms_error"] = number(total.relative_rms());
        totals["max_abs_error"] = number(total.max_abs_error);
    }
    const ordered_json report = {{"to", target_},
                                 {"kernels", kernels_},
                                 {"totals", totals},
                                 {"tensors", tensors},
                                 {"skipped", skipped}};
    context_.report("repack", report.dump(-1, ' ', false, ordered_json::error_handler_t::replace));
}

}  // namespace ckplugin::repack
