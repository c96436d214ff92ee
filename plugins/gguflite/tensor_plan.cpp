#include "tensor_plan.hpp"

#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "ck/error.hpp"
#include "ck/ggml_types.hpp"
#include "ck/suggest.hpp"
#include "json_text.hpp"

namespace ckplugin::gguflite {
using namespace ck;
namespace {

Dtype option_dtype(const Options& options, const std::string& key, Dtype fallback) {
    if (!options.has(key)) return fallback;
    auto d = dtype_from_scheme(options.get(key));
    if (!d) throw usage_error("option " + key + "=" + options.get(key) + ": unknown scheme");
    return *d;
}

std::string dims_word(std::size_t n) {
    return std::to_string(n) + "-D";
}

}  // namespace

SchemeRules::SchemeRules(const Options& options) {
    scheme_ = option_dtype(options, "scheme", Dtype::q4);
    keep_ = option_dtype(options, "keep", Dtype::f32);
    if (keep_ != Dtype::f32 && keep_ != Dtype::f16)
        throw usage_error("option keep=" + options.get("keep") + ": expected f32 or f16");
    file_ = options.get("schemes");
    if (file_.empty()) return;
    std::ifstream in(file_);
    if (!in) throw usage_error("schemes=" + file_ + ": cannot read the file");
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::ordered_json doc;
    try {
        doc = nlohmann::ordered_json::parse(text.str());
    } catch (const nlohmann::json::exception& e) {
        throw usage_error("schemes=" + file_ + ": not valid JSON (" + e.what() + ")");
    }
    if (!doc.is_object())
        throw usage_error("schemes=" + file_ +
                          ": expected a JSON object mapping tensor names or globs to "
                          "q8|q4|f16|f32");
    for (const auto& [pattern, value] : doc.items()) {
        std::optional<Dtype> d;
        if (value.is_string()) d = dtype_from_scheme(value.get<std::string>());
        if (!d)
            throw usage_error("schemes=" + file_ + ": '" + pattern + "' maps to " + value.dump() +
                              ", expected one of q8, q4, f16, f32");
        rules_.push_back({pattern, Glob(pattern), *d});
    }
}

Dtype SchemeRules::scheme_for(const std::string& name) {
    for (Rule& r : rules_)
        if (r.pattern == name) {
            r.used = true;
            return r.scheme;
        }
    for (Rule& r : rules_)
        if (r.glob.matches(name)) {
            r.used = true;
            return r.scheme;
        }
    return scheme_;
}

std::vector<std::string> SchemeRules::unused_rules(const ModelHeader& header) const {
    std::vector<std::string> out, names;
    for (const TensorInfo& t : header.tensors) names.push_back(t.name);
    for (const Rule& r : rules_) {
        if (r.used) continue;
        std::string closest;
        for (const std::string& n : closest_matches(r.glob, names))
            closest += (closest.empty() ? "; closest: '" : ", '") + n + "'";
        out.push_back("schemes=" + file_ + ": '" + r.pattern + "' matches no tensor" + closest);
    }
    return out;
}

std::vector<TensorPlan> plan_tensors(const ModelHeader& header, SchemeRules& rules) {
    std::vector<TensorPlan> plans;
    plans.reserve(header.tensors.size());
    std::unordered_set<std::string_view> names;
    std::uint64_t offset = 0;
    for (const TensorInfo& t : header.tensors) {
        auto refuse = [&](const std::string& why) {
            throw tensor_error(why, t.name, header.source);
        };
        TensorPlan p;
        p.name = t.name;
        p.source_type = t.type;
        p.source_bytes = t.nbytes;
        if (t.name.size() > std::numeric_limits<std::uint16_t>::max())
            refuse("name of " + std::to_string(t.name.size()) +
                   " bytes; GGUF-lite names hold at most 65535");
        if (invalid_utf8_at(t.name)) refuse("name is not valid UTF-8, as GGUF-lite needs");
        if (!names.insert(t.name).second) refuse("duplicate tensor name");

        const TypeInfo* info = find_type(t.type);
        if (!info || info->removed)
            refuse("type " + std::string(type_name(t.type)) + " cannot be read");
        if (!info->quantized && !info->dequantizable)
            p.source = Source::convert_int;  // I8..I64, F64
        else if (!info->dequantizable)
            refuse("type " + std::string(info->name) +
                   " has no dequantizer (nor in ggml), so it cannot become GGUF-lite");
        auto expected = tensor_bytes(t.type, t.ne);
        if (!expected || *expected != t.nbytes)
            refuse("byte size " + std::to_string(t.nbytes) + " does not match type " +
                   std::string(info->name) + " and shape " + t.shape_string());

        if (t.ne.size() > max_dims)
            refuse(std::to_string(t.ne.size()) + " dims; GGUF-lite holds at most 8");
        for (auto it = t.ne.rbegin(); it != t.ne.rend(); ++it) {
            if (*it <= 0) refuse("shape " + t.shape_string() + ": GGUF-lite has no empty tensors");
            if (*it > std::numeric_limits<std::uint32_t>::max())
                refuse("shape " + t.shape_string() + ": GGUF-lite dims are u32");
            p.dims.push_back(static_cast<std::uint32_t>(*it));
        }
        if (p.dims.empty()) p.dims.push_back(1);  // a 0-dim GGUF tensor is one value
        p.elements = *element_count(p.dims);
        p.row_length = p.dims.back();

        p.wanted = rules.scheme_for(t.name);
        if (p.source == Source::convert_int) {
            p.dtype = Dtype::f32;
            p.fallback = std::string(info->name) + " is not a float weight: stored as F32";
        } else if (p.dims.size() != 2 && p.wanted != Dtype::f32) {
            p.dtype = rules.keep();
            p.fallback = dims_word(p.dims.size()) + ": schemes apply to 2-D tensors";
        } else if (p.wanted == Dtype::q4 && p.dims[1] % q4_group != 0) {
            p.dtype = rules.keep();
            p.fallback = "inner dim " + std::to_string(p.dims[1]) + " is not a multiple of 64";
        } else {
            p.dtype = p.wanted;
        }
        if (p.dtype == p.wanted) p.fallback.clear();
        const auto f32_id = static_cast<std::uint32_t>(GgmlType::f32);
        const auto f16_id = static_cast<std::uint32_t>(GgmlType::f16);
        if ((p.dtype == Dtype::f32 && t.type == f32_id) ||
            (p.dtype == Dtype::f16 && t.type == f16_id))
            p.source = Source::copy;

        auto bytes = data_bytes(p.dtype, p.dims);
        if (!bytes || __builtin_add_overflow(offset, *bytes, &p.offset))
            refuse("shape " + t.shape_string() + ": size in bytes overflows");
        p.offset = offset;
        p.bytes = *bytes;
        offset += p.bytes;
        plans.push_back(std::move(p));
    }
    return plans;
}

}  // namespace ckplugin::gguflite
