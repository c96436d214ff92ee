#include "ck/tensor_filter.hpp"

#include <algorithm>
#include <vector>

#include "ck/error.hpp"
#include "ck/suggest.hpp"

namespace ck {
namespace {

std::optional<Glob> pattern_option(const Options& options, const char* key) {
    if (!options.has(key)) return std::nullopt;
    const std::string value = options.get(key);
    if (value.empty())
        throw usage_error(std::string("option ") + key + ": expected a tensor name or glob, e.g. " +
                          key + "=blk.*.ffn_*");
    return Glob(value);
}

std::string quoted_list(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
    return out;
}

}  // namespace

TensorFilter::TensorFilter(const Options& options)
    : only_(pattern_option(options, "only")), skip_(pattern_option(options, "skip")) {}

bool TensorFilter::selects(const std::string& name) const {
    if (only_ && !only_->matches(name)) return false;
    if (skip_ && skip_->matches(name)) return false;
    return true;
}

bool TensorFilter::chosen_by_only(const std::string& name) const {
    return only_ && only_->matches(name);
}

void TensorFilter::check_matches(const ModelHeader& in, std::string_view stage) const {
    if (!only_ && !skip_) return;
    std::vector<std::string> names;
    names.reserve(in.tensors.size());
    for (const TensorInfo& t : in.tensors) names.push_back(t.name);
    const std::string subject = "stage '" + std::string(stage) + "'";
    const std::string count =
        std::to_string(names.size()) + " tensor" + (names.size() == 1 ? "" : "s");
    for (const auto& option : {std::pair{"only", &only_}, std::pair{"skip", &skip_}}) {
        // Named copies, not a structured binding: Clang 14 (the fuzz build) cannot capture one.
        const char* const key = option.first;
        const auto* const glob = option.second;
        if (!*glob || std::any_of(names.begin(), names.end(),
                                  [&](const std::string& n) { return (*glob)->matches(n); }))
            continue;
        std::string message =
            std::string(key) + "=" + (*glob)->pattern() + " matches none of the " + count;
        if (!names.empty()) message += "; closest: " + quoted_list(closest_matches(**glob, names));
        throw Error(std::move(message), in.source, {}, subject, ErrorKind::usage);
    }
    if (std::none_of(names.begin(), names.end(), [&](const std::string& n) { return selects(n); }))
        throw Error((only_ ? "only=" + only_->pattern() + " and skip=" + skip_->pattern() +
                                 " together select none of the " + count
                           : "skip=" + skip_->pattern() + " matches all " + count +
                                 ", leaving nothing to work on"),
                    in.source, {}, subject, ErrorKind::usage);
}

}  // namespace ck
