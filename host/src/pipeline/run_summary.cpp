#include "pipeline/run_summary.hpp"

#include <cstdio>
#include <filesystem>
#include <set>
#include <system_error>

#include "ck/ggml_types.hpp"
#include "pipeline/progress.hpp"

namespace ckhost {

namespace {

// The written tensors (the plan's, less those the writer drops): their elements, their bytes as
// written, and whether any of them is quantized.
struct WrittenTensors {
    std::uint64_t elements = 0, bytes = 0;
    bool quantized = false;
};

WrittenTensors written_tensors(const nlohmann::json& plan) {
    std::set<std::string> dropped;
    for (const auto& name : plan.value("dropped", nlohmann::json::array()))
        dropped.insert(name.get<std::string>());
    WrittenTensors total;
    for (const auto& row : plan.value("tensors", nlohmann::json::array())) {
        if (dropped.contains(row["name"].get<std::string>()) || row["stages"].empty()) continue;
        const auto& last = row["stages"].back();  // what the writer was given
        std::uint64_t elements = 1;
        for (const auto& n : last["shape"]) elements *= n.get<std::uint64_t>();
        total.elements += elements;
        total.bytes += last["bytes"].get<std::uint64_t>();
        const ck::TypeInfo* type = ck::find_type(last["type"].get<std::string>());
        if (type && type->quantized) total.quantized = true;
    }
    return total;
}

std::string output_line(const std::string& path) {
    if (path == "-") return "ckhost: wrote standard output";
    std::error_code ec;
    const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
    if (ec) return "ckhost: wrote " + path;
    return "ckhost: wrote " + path + ": " + std::to_string(bytes) + " bytes (" +
           human_bytes(bytes) + ")";
}

}  // namespace

std::vector<std::string> success_summary(const nlohmann::json& report) {
    std::vector<std::string> lines;
    for (const auto& output : report.value("outputs", nlohmann::json::array()))
        lines.push_back(output_line(output.get<std::string>()));
    char text[128];
    std::snprintf(text, sizeof text, "ckhost: done in %.2f s", report.value("seconds", 0.0));
    std::string done = text;
    const WrittenTensors tensors = written_tensors(report.value("plan", nlohmann::json::object()));
    if (tensors.quantized && tensors.elements > 0) {
        std::snprintf(
            text, sizeof text, ", %s parameters at %.2f bits per weight",
            human_count(tensors.elements).c_str(),
            8.0 * static_cast<double>(tensors.bytes) / static_cast<double>(tensors.elements));
        done += text;
    }
    lines.push_back(done);
    return lines;
}

}  // namespace ckhost
