#include "writer_report.hpp"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace ckplugin::gguflite {
using namespace ck;
namespace {

using nlohmann::ordered_json;

// JSON has no infinity: an error that is not a number is written as the string "inf".
ordered_json error_json(double e) {
    if (std::isfinite(e)) return e;
    return "inf";
}

std::string error_text(double e) {
    if (e == 0) return "0";
    if (!std::isfinite(e)) return "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3e", e);
    return buf;
}

std::string padded(std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
}

}  // namespace

std::uint64_t SizeTable::total() const {
    std::uint64_t sum = overhead();
    for (std::uint64_t b : bytes) sum += b;
    return sum;
}

double SizeTable::ratio() const {
    const std::uint64_t t = total();
    return t == 0 ? 0.0 : static_cast<double>(f32_bytes) / static_cast<double>(t);
}

SizeTable size_table(const std::vector<TensorPlan>& plans, std::uint64_t metadata_bytes,
                     std::uint64_t descriptor_bytes) {
    SizeTable s;
    s.metadata = metadata_bytes;
    s.descriptors = descriptor_bytes;
    for (const TensorPlan& p : plans) {
        const auto d = static_cast<std::size_t>(p.dtype);
        ++s.tensors[d];
        s.bytes[d] += p.bytes;
        s.f32_bytes += p.elements * 4;
    }
    return s;
}

std::string sizes_json(const SizeTable& s) {
    ordered_json by_dtype = ordered_json::object();
    for (std::uint8_t d = 0; d < dtype_count; ++d)
        if (s.tensors[d] > 0)
            by_dtype[std::string(dtype_name(static_cast<Dtype>(d)))] = {{"tensors", s.tensors[d]},
                                                                        {"bytes", s.bytes[d]}};
    ordered_json doc = {{"by_dtype", by_dtype},         {"header", s.header},
                        {"descriptors", s.descriptors}, {"metadata", s.metadata},
                        {"overhead", s.overhead()},     {"total", s.total()},
                        {"f32_bytes", s.f32_bytes},     {"ratio_vs_f32", s.ratio()}};
    return doc.dump();
}

std::string fallbacks_json(const std::vector<TensorPlan>& plans) {
    ordered_json list = ordered_json::array();
    for (const TensorPlan& p : plans)
        if (!p.fallback.empty())
            list.push_back({{"tensor", p.name},
                            {"scheme", std::string(scheme_name(p.wanted))},
                            {"stored", std::string(dtype_name(p.dtype))},
                            {"reason", p.fallback}});
    return list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string round_trip_json(const RoundTripCheck& check) {
    ordered_json tensors = ordered_json::array();
    double worst_fake = 0, worst_source = 0;
    for (const TensorCheck& c : check.results()) {
        worst_fake = std::max(worst_fake, c.max_error_vs_fake);
        worst_source = std::max(worst_source, c.max_error_vs_source);
        ordered_json row = {{"tensor", c.name},
                            {"dtype", std::string(dtype_name(c.dtype))},
                            {"max_abs_error_vs_source", error_json(c.max_error_vs_source)},
                            {"max_abs_error_vs_fake_quant", error_json(c.max_error_vs_fake)},
                            {"mismatched_values", c.mismatches}};
        if (c.non_finite_source > 0) row["non_finite_source_values"] = c.non_finite_source;
        tensors.push_back(std::move(row));
    }
    ordered_json doc = {{"ok", check.passed()},
                        {"max_abs_error_vs_fake_quant", error_json(worst_fake)},
                        {"max_abs_error_vs_source", error_json(worst_source)},
                        {"tensors", tensors}};
    return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_report(std::ostream& out, const std::string& file, const std::vector<TensorPlan>& plans,
                  const SizeTable& s, const RoundTripCheck& check) {
    std::size_t width = 6;
    for (const TensorPlan& p : plans) width = std::max(width, p.name.size());
    out << "gguflite round trip: " << file
        << " written, read back and compared: " << (check.passed() ? "OK" : "FAILED") << "\n";
    out << "  " << padded("tensor", width) << "  " << padded("dtype", 16) << "  "
        << padded("max|err| vs source", 20) << "max|err| vs fake quant\n";
    for (const TensorCheck& c : check.results()) {
        out << "  " << padded(c.name, width) << "  " << padded(std::string(dtype_name(c.dtype)), 16)
            << "  " << padded(error_text(c.max_error_vs_source), 20)
            << error_text(c.max_error_vs_fake);
        if (c.mismatches > 0) out << "  (" << c.mismatches << " values differ)";
        out << "\n";
    }
    for (const TensorPlan& p : plans)
        if (!p.fallback.empty())
            out << "  fallback: " << p.name << " stored as " << dtype_name(p.dtype) << " ("
                << p.fallback << ")\n";
    out << "size table:\n";
    out << "  " << padded("dtype", 30) << padded("tensors", 9) << "bytes\n";
    for (std::uint8_t d = 0; d < dtype_count; ++d)
        if (s.tensors[d] > 0)
            out << "  " << padded(std::string(dtype_name(static_cast<Dtype>(d))), 30)
                << padded(std::to_string(s.tensors[d]), 9) << s.bytes[d] << "\n";
    out << "  " << padded("header + descriptors + metadata", 39) << s.overhead() << "  ("
        << s.header << " + " << s.descriptors << " + " << s.metadata << ")\n";
    out << "  " << padded("total", 39) << s.total() << "\n";
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", s.ratio());
    out << "  " << padded("F32 size of the same tensors", 39) << s.f32_bytes << "  (this file is "
        << ratio << " smaller)\n";
}

}  // namespace ckplugin::gguflite
